// Command registry serves an in-memory OCI registry (go-containerregistry's pkg/registry) on
// the address given as its only argument, so the e2e suite can `crank xpkg push` the function
// package and let Crossplane's package manager pull it, without Docker.
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: registry <host:port>")
	}
	server := &http.Server{
		Addr:    os.Args[1],
		Handler: registry.New(),
		// Bounds a stalled client; pushes of a package take well under this.
		ReadHeaderTimeout: 30 * time.Second,
	}
	log.Printf("serving an OCI registry on %s", os.Args[1])
	log.Fatal(server.ListenAndServe())
}
