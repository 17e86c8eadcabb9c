# EKS for the Trace Pathology Lab: a VPC with private node subnets, an EKS
# cluster with one managed node group, and an ECR repository per service.
# A thin root module over the community terraform-aws-modules, pinned to
# exact versions. Cost and teardown: infra/terraform/README.md.

provider "aws" {
  region = var.region

  default_tags {
    tags = var.tags
  }
}

data "aws_availability_zones" "available" {
  # Exclude local zones.
  filter {
    name   = "opt-in-status"
    values = ["opt-in-not-required"]
  }
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 2)

  # The platform make images builds for (output node_platform).
  node_platform = strcontains(var.node_ami_type, "ARM_64") ? "linux/arm64" : "linux/amd64"

  # ECR repositories of the Docker Hub cache are <prefix>/<image>; empty when
  # the cache is off (output ecr_pull_through_prefix).
  pull_through_prefix = var.dockerhub_secret_arn == null ? "" : "docker-hub"
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "6.0.1"

  name = var.name
  cidr = var.vpc_cidr
  azs  = local.azs

  # Nodes live in the private subnets; the public ones only hold the NAT
  # gateway (and a load balancer, should a user add one).
  private_subnets = [for i, _ in local.azs : cidrsubnet(var.vpc_cidr, 4, i)]
  public_subnets  = [for i, _ in local.azs : cidrsubnet(var.vpc_cidr, 8, i + 48)]

  enable_nat_gateway   = true
  single_nat_gateway   = true # one is enough for a lab, and each costs by the hour
  enable_dns_hostnames = true

  public_subnet_tags = {
    "kubernetes.io/role/elb" = 1
  }
  private_subnet_tags = {
    "kubernetes.io/role/internal-elb" = 1
  }

  tags = var.tags
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "21.1.0"

  name               = var.name
  kubernetes_version = var.kubernetes_version

  # The API is public only to the networks the user names, and private
  # inside the VPC.
  endpoint_public_access       = true
  endpoint_public_access_cidrs = var.api_allowed_cidrs
  endpoint_private_access      = true

  enable_cluster_creator_admin_permissions = true

  # Control-plane audit logs, kept a week: enough to look into a lab
  # session, cheap to store.
  enabled_log_types                      = ["audit", "authenticator"]
  cloudwatch_log_group_retention_in_days = 7

  # Kubernetes Secrets (the lab's PostgreSQL and Grafana passwords) are
  # encrypted with a KMS key the module creates.
  create_kms_key = true
  encryption_config = {
    resources = ["secrets"]
  }

  vpc_id     = module.vpc.vpc_id
  subnet_ids = module.vpc.private_subnets

  addons = {
    coredns    = {}
    kube-proxy = {}
    vpc-cni = {
      before_compute = true
    }
    eks-pod-identity-agent = {
      before_compute = true
    }
    # gp3 volumes for PostgreSQL and Kafka (k8s/overlays/eks). Its controller
    # gets AWS credentials by EKS Pod Identity: IMDS is closed to pods.
    aws-ebs-csi-driver = {
      pod_identity_association = [{
        role_arn        = aws_iam_role.ebs_csi.arn
        service_account = "ebs-csi-controller-sa"
      }]
    }
  }

  eks_managed_node_groups = {
    lab = {
      ami_type       = var.node_ami_type
      instance_types = [var.node_instance_type]
      min_size       = var.node_count
      max_size       = var.node_count
      desired_size   = var.node_count

      # IMDSv2 only, and a hop limit of 1 so that pods cannot reach the
      # node's credentials.
      metadata_options = {
        http_endpoint               = "enabled"
        http_tokens                 = "required"
        http_put_response_hop_limit = 1
      }

      # The kubelet pulls the cached Docker Hub images with the node's role.
      # The key comes from a variable, so it is known when planning.
      iam_role_additional_policies = {
        for k in(var.dockerhub_secret_arn == null ? [] : ["ecr_pull_through"]) : k => aws_iam_policy.ecr_pull_through[0].arn
      }
    }
  }

  tags = var.tags
}

# The EBS CSI driver's role, assumed through EKS Pod Identity.
resource "aws_iam_role" "ebs_csi" {
  name_prefix = "${var.name}-ebs-csi-"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "pods.eks.amazonaws.com" }
      Action    = ["sts:AssumeRole", "sts:TagSession"]
    }]
  })
  tags = var.tags
}

resource "aws_iam_role_policy_attachment" "ebs_csi" {
  role       = aws_iam_role.ebs_csi.name
  policy_arn = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
}

# One repository per service, and tracelab/tracelab for the load engine's
# image (k8s/base/load/load.yaml); make eks-push pushes each :dev.
resource "aws_ecr_repository" "service" {
  for_each = toset(concat(var.services, ["tracelab"]))

  name                 = "tracelab/${each.key}"
  image_tag_mutability = "MUTABLE" # make eks-push reuses the dev tag
  # make eks-down must be able to remove repositories that hold images.
  force_delete = true

  image_scanning_configuration {
    scan_on_push = true
  }

  tags = var.tags
}

data "aws_caller_identity" "current" {}

# Docker Hub through ECR (opt-in: dockerhub_secret_arn). Docker Hub allows
# anonymous clients 10 pulls an hour per IPv4 address, and the nodes share
# the NAT gateway's one address. With this rule, ECR pulls each image once
# with the secret's Docker Hub account and serves it from then on; make
# eks-deploy rewrites the Docker Hub images to <registry>/docker-hub/....
resource "aws_ecr_pull_through_cache_rule" "dockerhub" {
  count = var.dockerhub_secret_arn == null ? 0 : 1

  ecr_repository_prefix = local.pull_through_prefix
  upstream_registry_url = "registry-1.docker.io"
  credential_arn        = var.dockerhub_secret_arn
}

# A node's first pull of an image creates its repository in the cache and
# imports the image: two actions the nodes' read-only ECR policy lacks.
resource "aws_iam_policy" "ecr_pull_through" {
  count = var.dockerhub_secret_arn == null ? 0 : 1

  name_prefix = "${var.name}-ecr-pull-through-"
  description = "Lets the lab's nodes fill the Docker Hub pull-through cache."
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect   = "Allow"
      Action   = ["ecr:BatchImportUpstreamImage", "ecr:CreateRepository"]
      Resource = "arn:aws:ecr:${var.region}:${data.aws_caller_identity.current.account_id}:repository/${local.pull_through_prefix}/*"
    }]
  })
  tags = var.tags
}
