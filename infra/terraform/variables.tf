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
  description = "EKS Kubernetes version: the minor of K8S_VERSION in infra/local/versions.env, which make test-k8s checks the manifests against."
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
