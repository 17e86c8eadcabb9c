# tflint for infra/terraform (make test-k8s). Only the bundled terraform
# ruleset: the AWS ruleset is a plugin that tflint --init downloads, which the
# lab's offline CI cannot do. Modules are not called (their sources are not
# downloaded), so their inputs go unchecked: infra/terraform/README.md.
config {
  call_module_type = "none"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
