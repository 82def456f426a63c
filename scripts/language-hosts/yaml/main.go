// pulumi-language-yaml as scripts/install-pulumi-engine.sh builds it: the language host of
// github.com/pulumi/pulumi-yaml (v1.25.0, the newest the Go module proxy serves), answering the engine's `Link`
// call, which that release predates.
//
// `pulumi package add` ends by asking the program's language host to Link the package into the project, then
// records the package in Pulumi.yaml's `packages:`. pulumi-yaml v1.25.0 does not implement Link, so the CLI stops
// with "linking package: method Link not implemented" before it records anything. A Pulumi YAML program needs
// nothing linked (it reads the package's schema through the engine): later pulumi-yaml releases answer Link with an
// empty response for that reason (pkg/server/server.go of https://github.com/pulumi/pulumi-yaml, read 2026-12-02).
// This host does the same and is otherwise pulumi-yaml's own server, started as its command starts it, but for
// how often it checks that its engine lives (engineCheck).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/pulumi/pulumi-yaml/pkg/server"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
)

// linkingHost is pulumi-yaml's language host with Link answered: nothing to link for a YAML program.
type linkingHost struct {
	pulumirpc.LanguageRuntimeServer
}

func (linkingHost) Link(context.Context, *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	return &pulumirpc.LinkResponse{}, nil
}

func main() {
	var tracing, root, compiler string
	flag.StringVar(&tracing, "tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint")
	flag.StringVar(&root, "root", "", "Root of the program execution")
	flag.StringVar(&compiler, "compiler", "", "[obsolete] Compiler to use to pre-process YAML")
	flag.Parse()
	logging.InitLogging(false, 0, false)
	cmdutil.InitTracing("pulumi-language-yaml", "pulumi-language-yaml", tracing)

	var engineAddress string
	var cancel chan bool
	if args := flag.Args(); len(args) > 0 {
		engineAddress = args[0]
		cancel = watchEngine(engineAddress)
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancel,
		Init: func(srv *grpc.Server) error {
			host := server.NewLanguageHost(engineAddress, tracing, false /* useRPCLoader */)
			pulumirpc.RegisterLanguageRuntimeServer(srv, linkingHost{host})
			return nil
		},
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port) // the engine reads the port from the first line
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}

// engineCheck is how often the host asks its engine's health: pulumi-yaml's command asks every 5 minutes, so the
// host of a CLI killed by SIGKILL (which runs its plugins in process groups of their own) would serve on that long;
// every second, it ends with its engine as the provider's plugin does (within a second of the engine gone).
const engineCheck = time.Second

// watchEngine returns a channel closed when the engine stops answering its health check or on SIGINT.
func watchEngine(engineAddress string) chan bool {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	done := make(chan bool)
	go func() {
		<-ctx.Done()
		stop()
		close(done)
	}()
	if err := rpcutil.Healthcheck(ctx, engineAddress, engineCheck, stop); err != nil {
		cmdutil.Exit(fmt.Errorf("could not start health check host RPC server: %w", err))
	}
	return done
}
