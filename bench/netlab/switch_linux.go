package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The switch is the lab's network: one TAP device "eth0" in each machine's
// network namespace, and this process between them, an Ethernet switch that
// learns where each MAC address is, delivers every frame --delay after it was
// sent (one way; a round trip takes twice that) and drops every frame from
// or to a port that is cut. It exists because this machine's kernel has no
// netem queueing discipline (CONFIG_NET_SCH_NETEM unset): a kernel bridge
// cannot delay, so the frames cross a process that can.
//
// Frames queue per destination port in arrival order (the delay is the same
// for all, so a queue stays sorted by due time); a queue holding maxQueue
// frames drops the next, as a full device queue does.

// maxQueue is the frames waiting for one port.
const maxQueue = 1 << 16

// port is one machine's TAP device.
type port struct {
	name string
	tap  *os.File
	cut  atomic.Bool
	out  chan frame
}

// frame is one Ethernet frame and when it is due at its destination.
type frame struct {
	due  time.Time
	data []byte
}

// tapIn opens a TAP device named dev in the network namespace at nsPath
// (for example /var/run/netns/NAME) and returns its file. The device lives
// as long as the file is open. The namespace is entered on a locked OS
// thread that is then discarded.
func tapIn(nsPath, dev string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays locked: it ends with this goroutine, and the
		// runtime discards it rather than reuse a thread in another
		// namespace.
		ns, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: fmt.Errorf("namespace %s: %w", nsPath, err)}
			return
		}
		defer unix.Close(ns)
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("entering namespace %s: %w", nsPath, err)}
			return
		}
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: fmt.Errorf("/dev/net/tun: %w", err)}
			return
		}
		ifr, err := unix.NewIfreq(dev)
		if err != nil {
			unix.Close(fd)
			ch <- result{err: err}
			return
		}
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			ch <- result{err: fmt.Errorf("TAP %s in %s: %w", dev, nsPath, err)}
			return
		}
		// Non-blocking, the file is in the runtime's poller: Close ends a
		// Read in progress.
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
			ch <- result{err: err}
			return
		}
		ch <- result{f: os.NewFile(uintptr(fd), dev)}
	}()
	r := <-ch
	return r.f, r.err
}

// runSwitch runs the switch until interrupted. Its ports are given as
// NAME=NAMESPACE-PATH; it prints "ready" on stdout once every TAP exists,
// and takes "cut NAME" and "heal NAME" lines on the unix socket --control.
func runSwitch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("switch", flag.ContinueOnError)
	delay := fs.Duration("delay", 0, "one-way delay of every frame")
	control := fs.String("control", "", "unix socket `path` taking lines \"cut NAME\" and \"heal NAME\" (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *control == "" || fs.NArg() == 0 || *delay < 0 {
		return errors.New("switch: want --control PATH, a delay ≥ 0 and ports NAME=NAMESPACE-PATH")
	}
	var ports []*port
	byName := map[string]*port{}
	defer func() {
		for _, p := range ports {
			p.tap.Close()
		}
	}()
	for _, a := range fs.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok || name == "" || byName[name] != nil {
			return fmt.Errorf("switch: port %q: want a unique NAME=NAMESPACE-PATH", a)
		}
		tap, err := tapIn(path, "eth0")
		if err != nil {
			return fmt.Errorf("switch: port %s: %w", name, err)
		}
		p := &port{name: name, tap: tap, out: make(chan frame, maxQueue)}
		ports = append(ports, p)
		byName[name] = p
	}
	os.Remove(*control)
	ln, err := net.Listen("unix", *control)
	if err != nil {
		return fmt.Errorf("switch: %w", err)
	}
	defer ln.Close()
	go serveControl(ln, byName)

	var (
		mu    sync.Mutex
		where = map[[6]byte]*port{} // learned: source MAC → port
		wg    sync.WaitGroup
	)
	send := func(to *port, f frame) {
		if to.cut.Load() {
			return
		}
		select {
		case to.out <- f:
		default: // queue full: dropped
		}
	}
	for _, p := range ports {
		wg.Add(2)
		go func() { // writer: each frame at its due time
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case f := <-p.out:
					if d := time.Until(f.due); d > 0 {
						time.Sleep(d)
					}
					if !p.cut.Load() {
						p.tap.Write(f.data) // a frame to a device going down is lost
					}
				}
			}
		}()
		go func() { // reader: learn, then forward or flood
			defer wg.Done()
			buf := make([]byte, 65536)
			for {
				n, err := p.tap.Read(buf)
				if err != nil {
					return // the device was closed
				}
				if n < 14 || p.cut.Load() {
					continue
				}
				f := frame{due: time.Now().Add(*delay), data: append([]byte(nil), buf[:n]...)}
				var dst, src [6]byte
				copy(dst[:], f.data[0:6])
				copy(src[:], f.data[6:12])
				mu.Lock()
				where[src] = p
				to := where[dst]
				mu.Unlock()
				if to != nil && dst[0]&1 == 0 {
					if to != p {
						send(to, f)
					}
					continue
				}
				for _, q := range ports {
					if q != p {
						send(q, f)
					}
				}
			}
		}()
	}
	fmt.Println("ready")
	<-ctx.Done()
	for _, p := range ports {
		p.tap.Close() // ends the readers
	}
	ln.Close()
	wg.Wait()
	return nil
}

// serveControl takes "cut NAME" and "heal NAME" lines, answering "ok" or
// an error, until ln is closed.
func serveControl(ln net.Listener, ports map[string]*port) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				cmd, name, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
				p := ports[name]
				switch {
				case p == nil:
					fmt.Fprintf(c, "error: no port %q\n", name)
				case cmd == "cut":
					p.cut.Store(true)
					fmt.Fprintln(c, "ok")
				case cmd == "heal":
					p.cut.Store(false)
					fmt.Fprintln(c, "ok")
				default:
					fmt.Fprintf(c, "error: %q: want cut NAME or heal NAME\n", cmd)
				}
			}
		}()
	}
}

// runControl sends one line to a switch's control socket and returns an
// error unless it answers "ok".
func runControl(args []string) error {
	fs := flag.NewFlagSet("control", flag.ContinueOnError)
	sock := fs.String("control", "", "the switch's control socket (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sock == "" || fs.NArg() != 2 {
		return errors.New("control: want --control PATH cut|heal NAME")
	}
	c, err := net.DialTimeout("unix", *sock, 5*time.Second)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "%s %s\n", fs.Arg(0), fs.Arg(1))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if line = strings.TrimSpace(line); line != "ok" {
		return fmt.Errorf("control: %s", line)
	}
	return nil
}
