// herald-cri-reset stops and removes every pod sandbox of one CRI runtime, the way the kubelet
// would: the runtime tears down each pod's network (CNI DEL) and its containers, so that stopping
// the runtime afterwards leaves no veth, address lease, netns or mount behind. Built with the
// Kubernetes binaries from the same module tree (tools/k8s-lab/src/cluster/build.mjs).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: herald-cri-reset unix:///path/to/containerd.sock")
		os.Exit(2)
	}
	conn, err := grpc.NewClient(os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	client := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	list, err := client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "list pod sandboxes:", err)
		os.Exit(1)
	}
	failed := false
	for _, sandbox := range list.Items {
		name := sandbox.Id
		if meta := sandbox.Metadata; meta != nil {
			name = meta.Namespace + "/" + meta.Name
		}
		if _, err := client.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "stop pod sandbox %s: %v\n", name, err)
			failed = true
			continue
		}
		if _, err := client.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "remove pod sandbox %s: %v\n", name, err)
			failed = true
			continue
		}
		fmt.Printf("removed pod %s\n", name)
	}
	if failed {
		os.Exit(1)
	}
}
