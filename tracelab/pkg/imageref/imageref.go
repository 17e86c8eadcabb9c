// Package imageref reads and rewrites the image references of rendered
// Kubernetes manifests (kubectl kustomize's output) for k8s/images.sh: the
// manifests are the one list of what the lab runs, and a YAML parser, not a
// pattern over lines, finds the references in them.
package imageref

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"gopkg.in/yaml.v3"
)

// List returns every image reference of the documents, once each, sorted.
func List(r io.Reader) ([]string, error) {
	var refs []string
	err := each(r, func(doc *yaml.Node) error {
		walk(doc, func(image *yaml.Node) { refs = append(refs, image.Value) })
		return nil
	})
	slices.Sort(refs)
	return slices.Compact(refs), err
}

// Set writes the documents to w with every image reference that is a key
// of to replaced by its value.
func Set(r io.Reader, w io.Writer, to map[string]string) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	err := each(r, func(doc *yaml.Node) error {
		walk(doc, func(image *yaml.Node) {
			if ref, ok := to[image.Value]; ok {
				image.Value = ref
			}
		})
		return enc.Encode(doc)
	})
	if err != nil {
		return err
	}
	return enc.Close()
}

// each decodes the YAML documents of r one after another.
func each(r io.Reader, f func(*yaml.Node) error) error {
	dec := yaml.NewDecoder(r)
	for n := 1; ; n++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("manifest document %d: %v", n, err)
		}
		if err := f(&doc); err != nil {
			return err
		}
	}
}

// walk calls f with the value of every "image" key that holds a string: a
// container's, an init container's, wherever a manifest has one.
func walk(n *yaml.Node, f func(*yaml.Node)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "image" && v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				f(v)
			}
		}
	}
	for _, c := range n.Content {
		walk(c, f)
	}
}
