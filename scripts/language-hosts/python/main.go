// pulumi-language-python-runner: what scripts/install-pulumi-engine.sh puts in front of the Python language host it
// builds (the host of sdk/v3@v3.79.0, the newest the Go module proxy serves), so that the engine can start a plugin
// written in Python: a folder whose PulumiPlugin.yaml says `runtime: python`, such as this repository's provider/.
//
// The engine asks the language host to RunPlugin with the plugin's folder in the request's `info` (ProgramInfo:
// root directory, program directory, runtime options); the v3.79 host predates that field and runs `python ""`
// in the working directory, so the plugin never starts. This program is the language host the engine talks to:
// it answers RunPlugin itself, as later Python hosts do (https://github.com/pulumi/pulumi,
// sdk/python/cmd/pulumi-language-python/main.go, read 2026-12-02): the plugin's folder run by the Python of the
// `virtualenv` its PulumiPlugin.yaml names (relative to the plugin's root), else $PULUMI_PYTHON_CMD, else python3,
// in the request's working directory and environment, its standard output and error streamed back and its exit
// code last. Every other call goes, byte for byte, to the v3.79 host it starts (its path is the first argument; the
// rest are the engine's arguments for it), whose port it reads and whose process ends with this one.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

const (
	runPlugin = "/pulumirpc.LanguageRuntime/RunPlugin"
	install   = "/pulumirpc.LanguageRuntime/InstallDependencies"
	maxBytes  = 400 * 1024 * 1024 // the engine's own limit on a message (rpcutil.MaxRPCMessageSize)
)

// frames passes messages through as their bytes; a proto message (RunPlugin's) is marshalled as protobuf.
type frames struct{}

func (frames) Name() string { return "proto" }

func (frames) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case *[]byte:
		return *m, nil
	case proto.Message:
		return proto.Marshal(m)
	}
	return nil, fmt.Errorf("cannot marshal %T", v)
}

func (frames) Unmarshal(data []byte, v any) error {
	switch m := v.(type) {
	case *[]byte:
		*m = append([]byte(nil), data...)
		return nil
	case proto.Message:
		return proto.Unmarshal(data, m)
	}
	return fmt.Errorf("cannot unmarshal into %T", v)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-language-python-runner HOST [host arguments...]")
		os.Exit(2)
	}
	host := exec.Command(os.Args[1], os.Args[2:]...)
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := host.Start(); err != nil {
		fail(err)
	}
	lines := bufio.NewReader(out)
	port, err := lines.ReadString('\n')
	if err != nil {
		fail(fmt.Errorf("the Python language host gave no port: %w", err))
	}
	conn, err := grpc.NewClient("127.0.0.1:"+strings.TrimSpace(port),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(frames{}), grpc.MaxCallRecvMsgSize(maxBytes),
			grpc.MaxCallSendMsgSize(maxBytes)))
	if err != nil {
		fail(err)
	}
	server := grpc.NewServer(grpc.ForceServerCodec(frames{}), grpc.MaxRecvMsgSize(maxBytes),
		grpc.MaxSendMsgSize(maxBytes), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			switch method {
			case runPlugin:
				return runPython(stream)
			case install:
				return installFor(conn, stream)
			}
			return forward(conn, method, stream)
		}))
	listener, err := listen()
	if err != nil {
		fail(err)
	}
	fmt.Printf("%d\n", listener.port) // the engine reads the port from the first line
	go func() { _, _ = io.Copy(os.Stdout, lines) }()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ended := make(chan error, 1)
	go func() { ended <- host.Wait() }()
	go func() { _ = server.Serve(listener.Listener) }()
	select {
	case sig := <-signals: // the engine's shutdown: the host gets it too
		_ = host.Process.Signal(sig)
		<-ended
	case <-ended:
	}
	server.Stop()
	if state := host.ProcessState; state != nil && state.ExitCode() > 0 {
		os.Exit(state.ExitCode())
	}
}

// installFor answers InstallDependencies for a plugin: the v3.79 host, which predates the request's `info`, would make
// a virtualenv in the plugin's folder itself and upgrade pip, setuptools and wheel from the network into it. Here a
// plugin's virtualenv (its PulumiPlugin.yaml's `virtualenv`) must already exist, and nothing is installed. A
// program's request goes to the v3.79 host as before.
func installFor(conn *grpc.ClientConn, stream grpc.ServerStream) error {
	var req pulumirpc.InstallDependenciesRequest
	if err := stream.RecvMsg(&req); err != nil {
		return err
	}
	if !req.GetIsPlugin() {
		first, err := proto.Marshal(&req)
		if err != nil {
			return err
		}
		return relay(conn, install, stream, first)
	}
	venv := virtualenvOf(req.GetInfo())
	if venv == "" {
		return errors.New("the plugin's PulumiPlugin.yaml names no virtualenv (runtime.options.virtualenv): " +
			"name one that holds the plugin's requirements")
	}
	if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
		return fmt.Errorf("the plugin's virtualenv %s has no bin/python: create it (python3 -m venv) and install "+
			"the plugin's requirements into it; this engine installs nothing at run time", venv)
	}
	return stream.SendMsg(&pulumirpc.InstallDependenciesResponse{
		Stdout: []byte("the plugin's virtualenv " + venv + " is in place: nothing installed\n")})
}

// forward relays one call of any kind (unary or streaming) to the v3.79 host, with its metadata.
func forward(conn *grpc.ClientConn, method string, stream grpc.ServerStream) error {
	return relay(conn, method, stream, nil)
}

// relay is forward with the call's first message already read from the engine (first, when not nil).
func relay(conn *grpc.ClientConn, method string, stream grpc.ServerStream, first []byte) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		md = md.Copy()
		for _, key := range []string{":authority", "content-type", "user-agent"} {
			md.Delete(key)
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	client, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	if first != nil {
		if err := client.SendMsg(&first); err != nil {
			return err
		}
	}
	go func() {
		for {
			var frame []byte
			if err := stream.RecvMsg(&frame); err != nil {
				if errors.Is(err, io.EOF) {
					_ = client.CloseSend()
				} else {
					cancel()
				}
				return
			}
			if err := client.SendMsg(&frame); err != nil {
				return
			}
		}
	}()
	if header, err := client.Header(); err == nil {
		_ = stream.SendHeader(header)
	}
	for {
		var frame []byte
		if err := client.RecvMsg(&frame); err != nil {
			stream.SetTrailer(client.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := stream.SendMsg(&frame); err != nil {
			return err
		}
	}
}

// runPython runs the plugin's folder with its Python, streaming its output back, then its exit code.
func runPython(stream grpc.ServerStream) error {
	var req pulumirpc.RunPluginRequest
	if err := stream.RecvMsg(&req); err != nil {
		return err
	}
	info := req.GetInfo()
	program := req.GetProgram() // what a host of v3.79's time was sent
	if info != nil && info.GetProgramDirectory() != "" {
		program = info.GetProgramDirectory()
	}
	if program == "" {
		return errors.New("RunPlugin names no plugin folder")
	}
	env := append([]string(nil), req.GetEnv()...)
	python, err := pythonOf(info, &env)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(stream.Context(), python, append([]string{program}, req.GetArgs()...)...)
	cmd.Dir = req.GetPwd()
	cmd.Env = env
	sender := &sending{stream: stream}
	cmd.Stdout = writer{sender, false}
	cmd.Stderr = writer{sender, true}
	err = cmd.Run()
	var exited *exec.ExitError
	switch {
	case err == nil:
		return sender.send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: 0}})
	case errors.As(err, &exited):
		return sender.send(&pulumirpc.RunPluginResponse{
			Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(exited.ExitCode())}})
	default:
		return fmt.Errorf("could not run the Python plugin %s: %w", program, err)
	}
}

// pythonOf is the plugin's Python: its runtime options' virtualenv (relative to its root directory, activated in
// env), else $PULUMI_PYTHON_CMD, else python3.
func pythonOf(info *pulumirpc.ProgramInfo, env *[]string) (string, error) {
	if venv := virtualenvOf(info); venv != "" {
		python := filepath.Join(venv, "bin", "python")
		if _, err := os.Stat(python); err != nil {
			return "", fmt.Errorf("the plugin's virtualenv %s has no bin/python: create it (python3 -m venv) "+
				"and install the plugin's requirements", venv)
		}
		path := os.Getenv("PATH")
		for _, kv := range *env {
			if value, ok := strings.CutPrefix(kv, "PATH="); ok {
				path = value
			}
		}
		*env = append(*env, "VIRTUAL_ENV="+venv, "PATH="+filepath.Join(venv, "bin")+string(os.PathListSeparator)+path)
		return python, nil
	}
	if python := os.Getenv("PULUMI_PYTHON_CMD"); python != "" {
		return python, nil
	}
	return exec.LookPath("python3")
}

// virtualenvOf is the `virtualenv` of a program's or plugin's runtime options, made absolute against its root
// directory; "" when none is named.
func virtualenvOf(info *pulumirpc.ProgramInfo) string {
	if info == nil || info.GetOptions() == nil {
		return ""
	}
	venv, _ := info.GetOptions().AsMap()["virtualenv"].(string)
	if venv != "" && !filepath.IsAbs(venv) {
		venv = filepath.Join(info.GetRootDirectory(), venv)
	}
	return venv
}

// sending serializes the two output streams' messages on the one gRPC stream.
type sending struct {
	stream grpc.ServerStream
	lock   sync.Mutex
}

func (s *sending) send(m *pulumirpc.RunPluginResponse) error {
	s.lock.Lock()
	defer s.lock.Unlock()
	return s.stream.SendMsg(m)
}

type writer struct {
	sender *sending
	stderr bool
}

func (w writer) Write(p []byte) (int, error) {
	chunk := append([]byte(nil), p...)
	m := &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: chunk}}
	if w.stderr {
		m = &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: chunk}}
	}
	if err := w.sender.send(m); err != nil {
		return 0, err
	}
	return len(p), nil
}

type portListener struct {
	net.Listener
	port int
}

func listen() (portListener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return portListener{}, err
	}
	return portListener{l, l.Addr().(*net.TCPAddr).Port}, nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "pulumi-language-python-runner: %v\n", err)
	os.Exit(1)
}
