package cli

import (
	"fmt"
	"os"
	"strings"

	"tracelab/pkg/imageref"
)

func init() {
	registerInternal("images", "list or replace the image references of rendered manifests on stdin (k8s/images.sh)", runImages)
	withSubcommands("images", imagesUsage)
}

const imagesUsage = `usage:
  tracelab images list < manifests               every image reference, once each
  tracelab images set FROM=TO... < manifests     the manifests with each image FROM replaced by TO`

func runImages(args []string) int {
	switch args[0] {
	case "list":
		if len(args) > 1 {
			return fail(exitUsage, "images list: unexpected argument %q", args[1])
		}
		refs, err := imageref.List(os.Stdin)
		if err != nil {
			return fail(exitUsage, "images list: %v", err)
		}
		for _, r := range refs {
			fmt.Println(r)
		}
		return exitOK
	case "set":
		to := map[string]string{}
		for _, a := range args[1:] {
			from, ref, ok := strings.Cut(a, "=")
			if !ok || from == "" || ref == "" {
				return fail(exitUsage, "images set: %q is not FROM=TO", a)
			}
			to[from] = ref
		}
		if err := imageref.Set(os.Stdin, os.Stdout, to); err != nil {
			return fail(exitUsage, "images set: %v", err)
		}
		return exitOK
	}
	return fail(exitUsage, "unknown images command %q; run 'tracelab images --help'", args[0])
}
