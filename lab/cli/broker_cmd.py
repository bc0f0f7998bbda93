"""`lab broker`: run the embedded Kafka-protocol broker in the foreground."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.live import Live
from rich.text import Text

from lab.broker.broker import Broker
from lab.broker.config import BrokerConfig, default_data_dir, default_max_connections
from lab.broker.coordinator import CoordinatorConfig
from lab.broker.coordinator.override import OverrideError, load_assignor
from lab.broker.protocol import REQUEST_MAX_BYTES_DEFAULT
from lab.broker.server import BrokerServer


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def status_line(server: BrokerServer, started: float, last: tuple[float, int]) -> Text:
    stats = server.stats
    elapsed = max(time.monotonic() - last[0], 1e-6)
    rate = (stats.requests - last[1]) / elapsed
    topics = server.broker.logs.topics()
    partitions = sum(t.num_partitions for t in topics.values())
    return Text.assemble(
        ("● ", "bold green"), f"up {time.monotonic() - started:,.0f}s  ",
        f"topics {len(topics)} ({partitions} partitions)  ",
        f"groups {len(server.broker.coordinator.groups)}  ",
        f"connections {stats.open_connections}  ",
        f"in {stats.bytes_in / 2**20:,.1f} MiB  out {stats.bytes_out / 2**20:,.1f} MiB  ",
        f"{rate:,.0f} req/s",
    )


async def serve(config: BrokerConfig, console: Console, quiet: bool) -> None:
    server = BrokerServer(Broker(config))
    port = await server.start()
    console.print(f"[bold]Embedded broker[/bold] listening on {config.host}:{port} "
                  f"(bootstrap.servers={config.advertised()}:{port}); data in {config.data_dir}")
    console.print("Press Ctrl-C to stop.")
    started = time.monotonic()
    try:
        if quiet:
            await asyncio.Event().wait()
        with Live(console=console, refresh_per_second=2, transient=True) as live:
            last = (time.monotonic(), 0)
            while True:
                await asyncio.sleep(1)
                live.update(status_line(server, started, last))
                last = (time.monotonic(), server.stats.requests)
    finally:
        await server.stop()


def broker(
    port: int = typer.Option(9092, min=0, max=65535, help="Port to listen on (0: any free port)."),
    host: str = typer.Option("127.0.0.1", help="Address to bind. Anything but loopback exposes the broker."),
    data_dir: Path = typer.Option(
        None, "--data-dir", help="Where the logs live [default: ~/.local/share/kafka-internals-lab/broker]."),
    partitions: int = typer.Option(3, "--num-partitions", min=1, help="Partitions of auto-created topics."),
    no_auto_create: bool = typer.Option(False, "--no-auto-create", help="Refuse unknown topics instead."),
    initial_delay: int = typer.Option(
        3000, "--group-initial-rebalance-delay-ms", min=0,
        help="How long a new group waits for more members before its first rebalance (Kafka's default 3000)."),
    min_session: int = typer.Option(
        6000, "--group-min-session-timeout-ms", min=0,
        help="Smallest session.timeout.ms a consumer may ask for (Kafka's default 6000)."),
    assignor_override: str = typer.Option(
        None, "--assignor-override", metavar="NAME|module:attr|file.py:attr",
        help="Lab instrument, off by default: replace the group leader's assignment with this assignor's "
             "(range, roundrobin, sticky, cooperative-sticky, or your own). Real Kafka never does this."),
    quiet: bool = typer.Option(False, "--quiet", help="No live status line."),
    max_connections: int = typer.Option(
        None, "--max-connections", min=1, help="Connections open at once (max.connections). Default: half the "
                                               "open-file limit."),
    max_connections_per_ip: int = typer.Option(
        None, "--max-connections-per-ip", min=1, help="Connections from one address (max.connections.per.ip). "
                                                      "Default: as --max-connections."),
    max_idle_ms: int = typer.Option(
        600_000, "--connections-max-idle-ms", min=1, help="An idle connection is closed after this "
                                                          "(connections.max.idle.ms)."),
    max_request_bytes: int = typer.Option(
        REQUEST_MAX_BYTES_DEFAULT, "--socket-request-max-bytes", min=1024,
        help="The largest request accepted (socket.request.max.bytes)."),
    queued_max_request_bytes: int = typer.Option(
        256 * 1024 * 1024, "--queued-max-request-bytes", min=1024,
        help="Request bytes buffered across all connections (queued.max.request.bytes)."),
    max_partitions: int = typer.Option(
        None, "--max-partitions", min=1, help="All topics' partitions together; more is refused with "
                                              "INVALID_PARTITIONS. Default: a quarter of the open-file limit."),
) -> None:
    """Run the lab's embedded Kafka broker in the foreground (confluent-kafka clients can connect to it). The limits
    that keep one client from stopping it for the others have Kafka's names."""
    console = Console()
    if not is_loopback(host):
        console.print(f"[bold yellow]warning:[/bold yellow] binding to {host}: other machines can reach this "
                      "broker, which has no authentication. Use --host 127.0.0.1 to keep it local.")
    if assignor_override:
        try:
            load_assignor(assignor_override)
        except OverrideError as error:
            raise typer.BadParameter(str(error), param_hint="--assignor-override") from None
        console.print(f"[bold yellow]assignor override:[/bold yellow] group assignments will be computed by "
                      f"{assignor_override}, not by the group leader (a lab instrument; real Kafka never does this).")
    try:
        coordinator = CoordinatorConfig(group_initial_rebalance_delay_ms=initial_delay,
                                        group_min_session_timeout_ms=min_session,
                                        assignor_override=assignor_override or None)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    connections = max_connections or default_max_connections()
    config = BrokerConfig(host=host, port=port, data_dir=data_dir or default_data_dir(), num_partitions=partitions,
                          auto_create_topics_enable=not no_auto_create, coordinator=coordinator,
                          max_connections=connections, max_connections_per_ip=max_connections_per_ip or connections,
                          connections_max_idle_ms=max_idle_ms, socket_request_max_bytes=max_request_bytes,
                          queued_max_request_bytes=queued_max_request_bytes, max_partitions=max_partitions)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(config, console, quiet))
    except OSError as error:
        console.print(f"[bold red]error:[/bold red] cannot listen on {host}:{port}: {error.strerror or error}")
        raise typer.Exit(1) from None
    except RuntimeError as error:  # the data directory is locked by another broker
        console.print(f"[bold red]error:[/bold red] {error}")
        raise typer.Exit(1) from None
    console.print("Broker stopped.")
