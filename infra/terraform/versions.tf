terraform {
  # The terraform-aws-modules eks module v21 needs Terraform >= 1.5.7 and
  # the AWS provider 6.x; OpenTofu >= 1.6 works as well.
  required_version = ">= 1.5.7"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0, < 7.0"
    }
  }
}
