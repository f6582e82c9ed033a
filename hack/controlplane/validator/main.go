// Command validator checks objects as kube-apiserver checks a create of a custom resource, with
// kube-apiserver's own code (k8s.io/apiextensions-apiserver) and Crossplane's own XRD-to-CRD
// conversion (crossplane-runtime's xcrd), so the unit tests judge rendered objects by the real
// rules rather than a re-implementation of them.
//
// Usage: validator PATH... where each PATH is a CRD or XRD YAML file or a directory of them
// (recursed, multi-document). Then one JSON request per line on stdin,
//
//	{"object": {...}, "fieldValidation": "Strict"}    (or "Ignore": unknown fields pruned quietly)
//
// (with "withStatus": true, the status a create drops is kept and validated too);
//
// and one JSON answer per line on stdout:
//
//	{"known": false, ...}    no served CRD version defines the object's apiVersion and kind
//	{"known": true, "errors": [], "message": "", "stored": {...}}    kube-apiserver accepts it
//	{"known": true, "errors": ["spec.x: Required value"], "message": "Kind.group \"name\" is invalid: spec.x: Required value", ...}
//
// `errors` are the field errors, or under Strict the strict decoding errors (`unknown field
// "spec.y"`) a create fails on before validation; `message` is what the API server's Status
// carries for them; `stored` is the object as the server would store it (pruned, defaulted,
// status dropped where the status subresource owns it).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// A served version of a CRD: what the API server builds for it when the CRD is established.
type served struct {
	kind       schema.GroupVersionKind
	structural *structuralschema.Structural
	strategy   interface {
		PrepareForCreate(context.Context, runtime.Object)
		Validate(context.Context, runtime.Object) field.ErrorList
	}
}

type request struct {
	Object          map[string]any
	FieldValidation string
	// WithStatus keeps and validates the status a create would drop: what a controller's status
	// update (the status subresource) must pass.
	WithStatus bool
}

type answer struct {
	Known   bool           `json:"known"`
	Errors  []string       `json:"errors"`
	Message string         `json:"message"`
	Stored  map[string]any `json:"stored"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validator CRD_OR_XRD_PATH... (objects as JSON lines on stdin)")
		os.Exit(2)
	}
	catalog := map[schema.GroupVersionKind]*served{}
	for _, root := range os.Args[1:] {
		if err := load(root, catalog); err != nil {
			fmt.Fprintf(os.Stderr, "validator: %v\n", err)
			os.Exit(1)
		}
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			reply, verr := check(catalog, line)
			if verr != nil {
				fmt.Fprintf(os.Stderr, "validator: %v\n", verr)
				os.Exit(1)
			}
			encoded, _ := json.Marshal(reply)
			out.Write(append(encoded, '\n'))
			out.Flush()
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "validator: reading stdin: %v\n", err)
			os.Exit(1)
		}
	}
}

func load(root string, catalog map[schema.GroupVersionKind]*served) error {
	return filepath.WalkDir(root, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entry.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		reader := utilyaml.NewYAMLReader(bufio.NewReader(file))
		for {
			document, err := reader.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err := add(document, catalog); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	})
}

// add registers a CRD's served versions, or those of the CRD Crossplane derives from an XRD.
func add(document []byte, catalog map[schema.GroupVersionKind]*served) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(document, &head); err != nil {
		return err
	}
	group := strings.Split(head.APIVersion, "/")[0]
	crd := &apiextensionsv1.CustomResourceDefinition{}
	switch {
	case head.Kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io":
		if err := yaml.UnmarshalStrict(document, crd); err != nil {
			return err
		}
	case head.Kind == "CompositeResourceDefinition" && group == "apiextensions.crossplane.io":
		// v2 XRDs are served from v1's storage with no conversion: the same fields.
		xrd := &xpv1.CompositeResourceDefinition{}
		if err := yaml.Unmarshal(document, xrd); err != nil {
			return err
		}
		derived, err := xcrd.ForCompositeResource(xrd)
		if err != nil {
			return fmt.Errorf("deriving the CRD of XRD %s: %w", xrd.GetName(), err)
		}
		crd = derived
	default:
		return nil
	}
	for _, version := range crd.Spec.Versions {
		if !version.Served || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
			continue
		}
		entry, err := serve(crd, version)
		if err != nil {
			return fmt.Errorf("%s/%s %s: %w", crd.Spec.Group, version.Name, crd.Spec.Names.Kind, err)
		}
		catalog[entry.kind] = entry
	}
	return nil
}

// serve builds what customresource_handler.go's getOrCreateServingInfoFor builds for a version.
func serve(crd *apiextensionsv1.CustomResourceDefinition, version apiextensionsv1.CustomResourceDefinitionVersion) (*served, error) {
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(version.Schema, internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	structural = structural.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(structural); err != nil {
		return nil, err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	var status *apiextensions.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if version.Subresources != nil && version.Subresources.Status != nil {
		status = &apiextensions.CustomResourceSubresourceStatus{}
		if statusSchema, ok := internal.OpenAPIV3Schema.Properties["status"]; ok {
			if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
				return nil, err
			}
		}
	}
	var scale *apiextensions.CustomResourceSubresourceScale
	if version.Subresources != nil && version.Subresources.Scale != nil {
		scale = &apiextensions.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(version.Subresources.Scale, scale, nil); err != nil {
			return nil, err
		}
	}
	kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version.Name, Kind: crd.Spec.Names.Kind}
	strategy := customresource.NewStrategy(
		unstructuredTyper{}, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, kind,
		validator, statusValidator, structural, status, scale, version.SelectableFields,
	)
	return &served{kind: kind, structural: structural, strategy: strategy}, nil
}

// check runs a create's decode (pruning with unknown-field tracking, defaulting), then the
// strategy's PrepareForCreate and Validate, as the API server does with fieldValidation=Strict.
func check(catalog map[schema.GroupVersionKind]*served, line []byte) (answer, error) {
	// The API server's JSON decoding: whole numbers become int64, as the schema and CEL expect.
	// (Only maps and slices get that conversion, not a struct's fields: hence the map here.)
	raw := map[string]any{}
	if err := utiljson.Unmarshal(line, &raw); err != nil {
		return answer{}, fmt.Errorf("not a JSON request: %w", err)
	}
	var asked request
	asked.Object, _ = raw["object"].(map[string]any)
	asked.FieldValidation, _ = raw["fieldValidation"].(string)
	asked.WithStatus, _ = raw["withStatus"].(bool)
	if asked.Object == nil {
		return answer{}, fmt.Errorf("the request has no object: %s", line)
	}
	if asked.FieldValidation != "Strict" && asked.FieldValidation != "Ignore" {
		return answer{}, fmt.Errorf("fieldValidation must be Strict or Ignore, not %q", asked.FieldValidation)
	}
	u := &unstructured.Unstructured{Object: asked.Object}
	entry, ok := catalog[u.GroupVersionKind()]
	if !ok {
		return answer{Known: false, Errors: []string{}}, nil
	}
	unknown, err := coerce(u, entry.structural)
	if err != nil {
		// The API server refuses such a body while decoding it (HTTP 400), before any validation.
		return answer{Known: true, Errors: []string{err.Error()}, Message: err.Error()}, nil
	}
	if len(unknown) > 0 && asked.FieldValidation == "Strict" {
		strict := make([]error, len(unknown))
		texts := make([]string, len(unknown))
		for i, path := range unknown {
			strict[i] = fmt.Errorf(`unknown field "%s"`, path)
			texts[i] = strict[i].Error()
		}
		return answer{Known: true, Errors: texts, Message: runtime.NewStrictDecodingError(strict).Error()}, nil
	}
	structuraldefaulting.Default(u.Object, entry.structural)
	ctx := context.Background()
	if !asked.WithStatus {
		entry.strategy.PrepareForCreate(ctx, u)
	}
	found := entry.strategy.Validate(ctx, u)
	reply := answer{Known: true, Errors: make([]string, len(found)), Stored: u.Object}
	for i, e := range found {
		reply.Errors[i] = e.Error()
	}
	if len(found) > 0 {
		reply.Message = apierrors.NewInvalid(entry.kind.GroupKind(), u.GetName(), found).Error()
	}
	return reply, nil
}

// coerce is customresource_handler.go's unstructuredSchemaCoercer.apply for a create with
// fieldValidation=Strict: the paths of the fields it prunes.
func coerce(u *unstructured.Unstructured, structural *structuralschema.Structural) ([]string, error) {
	kind, apiVersion := u.GetKind(), u.GetAPIVersion()
	objectMeta, foundObjectMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, structural)
	fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if fieldErr != nil {
		return nil, fieldErr
	}
	unknown = append(unknown, paths...)
	u.SetKind(kind)
	u.SetAPIVersion(apiVersion)
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// unstructuredTyper answers the strategy's ObjectKinds from the object itself, as the API
// server's typer does for custom resources.
type unstructuredTyper struct{}

func (unstructuredTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return []schema.GroupVersionKind{obj.GetObjectKind().GroupVersionKind()}, false, nil
}

func (unstructuredTyper) Recognizes(schema.GroupVersionKind) bool { return true }
