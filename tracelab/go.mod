module tracelab

go 1.24

require (
	github.com/google/licensecheck v0.3.1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/text v0.14.0
	gopkg.in/yaml.v3 v3.0.1
)
