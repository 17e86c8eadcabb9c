output "cluster_name" {
  description = "Name of the EKS cluster."
  value       = module.eks.cluster_name
}

output "region" {
  description = "AWS region of the lab."
  value       = var.region
}

output "configure_kubectl" {
  description = "Command that adds the cluster to kubeconfig under the context tracelab's eks runtime uses."
  value       = "aws eks update-kubeconfig --region ${var.region} --name ${module.eks.cluster_name} --alias tracelab-eks"
}

output "ecr_registry" {
  description = "Registry of the services' images: the eks overlay's ECR_REGISTRY."
  value       = "${data.aws_caller_identity.current.account_id}.dkr.ecr.${var.region}.amazonaws.com"
}

output "ecr_repository_urls" {
  description = "ECR repository URL per service."
  value       = { for name, repo in aws_ecr_repository.service : name => repo.repository_url }
}
