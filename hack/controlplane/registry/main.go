// Command registry serves an in-memory OCI registry (go-containerregistry's pkg/registry) on
// the address given as its first argument, so the e2e suite can `crank xpkg push` the function
// package and let Crossplane's package manager pull it, without Docker. Given a certificate and
// key as well it serves HTTPS, as a private chart mirror does: provider-helm pulls OCI charts
// over TLS unless a Release sets plainHTTP, which the function never composes.
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	if len(os.Args) != 2 && len(os.Args) != 4 {
		log.Fatal("usage: registry <host:port> [<tls.crt> <tls.key>]")
	}
	server := &http.Server{
		Addr:    os.Args[1],
		Handler: registry.New(),
		// Bounds a stalled client; pushes of a package take well under this.
		ReadHeaderTimeout: 30 * time.Second,
	}
	if len(os.Args) == 4 {
		log.Printf("serving an OCI registry over HTTPS on %s", os.Args[1])
		log.Fatal(server.ListenAndServeTLS(os.Args[2], os.Args[3]))
	}
	log.Printf("serving an OCI registry on %s", os.Args[1])
	log.Fatal(server.ListenAndServe())
}
