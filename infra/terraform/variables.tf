variable "region" {
  description = "AWS region of the lab."
  type        = string
  default     = "eu-west-1"
}

variable "name" {
  description = "Name of the cluster, the VPC and the other resources of the lab."
  type        = string
  default     = "tracelab"
}

variable "kubernetes_version" {
  description = "EKS Kubernetes version: the minor of K8S_VERSION in infra/local/versions.env, which make test-k8s checks the manifests against. In EKS standard support until 2027-03-27; after that EKS bills extended support ($0.60 an hour instead of $0.10)."
  type        = string
  default     = "1.35"
}

variable "api_allowed_cidrs" {
  description = "The only networks allowed to reach the cluster's public API endpoint, e.g. [\"203.0.113.7/32\"]. No default: make eks-up passes ADMIN_CIDR."
  type        = list(string)

  validation {
    condition     = length(var.api_allowed_cidrs) > 0 && !contains(var.api_allowed_cidrs, "0.0.0.0/0")
    error_message = "Give the CIDR of your own network (e.g. your IP/32); the API is never open to 0.0.0.0/0."
  }
}

variable "vpc_cidr" {
  description = "Address range of the lab's VPC."
  type        = string
  default     = "10.42.0.0/16"
}

variable "node_instance_type" {
  description = "Instance type of the managed node group. Not burstable: CPU credits would distort the lab's latency measurements."
  type        = string
  default     = "m6i.large"
}

variable "node_ami_type" {
  description = "AMI type of the managed node group; its architecture must be node_instance_type's (x86_64 for m6i, ARM_64 for Graviton types such as m7g). make images builds the services for it (output node_platform)."
  type        = string
  default     = "AL2023_x86_64_STANDARD"

  validation {
    condition     = contains(["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD"], var.node_ami_type)
    error_message = "Use AL2023_x86_64_STANDARD (x86_64 instance types) or AL2023_ARM_64_STANDARD (Graviton instance types)."
  }
}

variable "node_count" {
  description = "Nodes in the managed node group: two m6i.large (2 vCPU, 8 GiB each) hold the lab with room for a scenario's load."
  type        = number
  default     = 2
}

variable "services" {
  description = "The lab's services: one ECR repository each (tracelab/<service>). Must list every folder of services/ with a pom.xml (checked by make test-k8s)."
  type        = list(string)
  default     = ["pricing", "catalog", "customers", "gateway", "orders", "ingest", "ledger"]
}

variable "tags" {
  description = "Tags on every resource that supports them."
  type        = map(string)
  default = {
    Project   = "trace-pathology-lab"
    ManagedBy = "terraform"
  }
}

variable "dockerhub_secret_arn" {
  description = "Optional. ARN of a Secrets Manager secret, in the lab's region and named ecr-pullthroughcache/<anything>, holding {\"username\": ..., \"accessToken\": ...} of a Docker Hub account. When set, ECR caches Docker Hub's images (pull-through cache, repositories docker-hub/...) and make eks-deploy pulls them from there, past Docker Hub's anonymous pull limit. Null: the nodes pull from Docker Hub anonymously, through the NAT gateway's one address."
  type        = string
  default     = null

  validation {
    condition     = var.dockerhub_secret_arn == null || can(regex("^arn:aws:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:ecr-pullthroughcache/", var.dockerhub_secret_arn))
    error_message = "ECR accepts only a Secrets Manager secret whose name starts with ecr-pullthroughcache/ (infra/terraform/README.md, \"Docker Hub through ECR\")."
  }
}
