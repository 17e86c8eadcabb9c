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

output "node_platform" {
  description = "Platform of the nodes (from node_ami_type), which make images builds for."
  value       = local.node_platform
}

output "ecr_pull_through_prefix" {
  description = "Repository prefix of the Docker Hub pull-through cache in ecr_registry, or \"\" when it is off (dockerhub_secret_arn unset). make eks-deploy pulls Docker Hub images through it."
  value       = local.pull_through_prefix
}
