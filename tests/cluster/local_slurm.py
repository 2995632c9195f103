"""A real one-node SLURM cluster on localhost, for proving the workflow's SLURM path.

Debian's SLURM 22.05 runs without systemd, cgroups or an accounting daemon when configured as
below (../shared/ENVIRONMENT.md lists what was checked on these machines): a private munged
with its own key and socket, ``slurmctld -D -i`` and ``slurmd -D`` as root in the background,
and the job-completion plugin ``jobcomp/filetxt``, whose log is how a test proves that jobs
went through the scheduler (``sacct`` needs slurmdbd, which this setup does not run).

Everything lives in one temporary folder, except ``/etc/slurm/slurm.conf``: Snakemake's SLURM
job step drops ``SLURM_CONF`` before its inner ``srun``, so the config must also be readable
there. A symlink is put in place and whatever was there before is restored on shutdown. That
file is the machine's, so one cluster runs at a time on a machine: two suites run side by side
(two clones on one machine) would each point it at their own cluster, and a job step's
``srun`` would ask the other controller for its allocation ("Invalid job id specified"). A
machine-wide lock (:data:`MACHINE_LOCK`) is held from start to shutdown; a second cluster waits
for it.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Debian packages of a one-node cluster (controller, node daemon, client commands, auth)
SLURM_PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
#: commands the packages provide and the cluster needs
SLURM_COMMANDS = ("slurmctld", "slurmd", "sinfo", "squeue", "scancel", "sbatch", "srun")
MUNGE_COMMANDS = ("munged", "mungekey")
ETC_CONF = Path("/etc/slurm/slurm.conf")
#: held by the one local cluster of the machine while it runs (see the module's docstring)
MACHINE_LOCK = Path("/tmp/recenter-local-slurm.lock")


class ClusterError(RuntimeError):
    """The local cluster could not be installed, started or stopped; the message says why."""


def _run(cmd: list[str], timeout: float = 60, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)


def missing_commands(commands: tuple[str, ...] = (*SLURM_COMMANDS, *MUNGE_COMMANDS)) -> list[str]:
    """Commands not on PATH (nothing missing: no install needed); SLURM's and munge's by default."""
    return [c for c in commands if shutil.which(c) is None]


def ensure_packages(
    packages: tuple[str, ...] = SLURM_PACKAGES,
    commands: tuple[str, ...] = (*SLURM_COMMANDS, *MUNGE_COMMANDS),
) -> None:
    """Install Debian ``packages`` if any of ``commands`` is missing (SLURM and munge by default).

    Runs ``apt-get update`` once, then one ``apt-get install``. Needs root (CI is root); a
    machine without apt or root gets a ClusterError that says so instead of a skipped test.
    """
    missing = missing_commands(commands)
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise ClusterError(f"{missing} not installed and no apt-get to install {packages}")
    if os.geteuid() != 0:
        raise ClusterError(
            f"{missing} not installed and not root: run `apt-get install -y "
            f"--no-install-recommends {' '.join(packages)}` as root first"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ):
        proc = _run(cmd, timeout=600, env=env)
        if proc.returncode != 0:
            raise ClusterError(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stderr}")
    still = missing_commands(commands)
    if still:
        raise ClusterError(f"installed {packages} but {still} are still not on PATH")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def node_line() -> str:
    """This machine's node definition as slurmd detects it, reachable on the loopback address."""
    proc = _run(["slurmd", "-C"])
    first = proc.stdout.splitlines()[0] if proc.stdout else ""
    if proc.returncode != 0 or not first.startswith("NodeName="):
        raise ClusterError(f"`slurmd -C` gave no node line ({proc.returncode}): {proc.stderr}")
    return f"{first} NodeAddr=127.0.0.1 State=UNKNOWN"


def slurm_conf(root: Path, munge_socket: Path, node: str) -> str:
    """A one-node slurm.conf whose state, logs and job-completion log all live under ``root``."""
    host = node.split()[0].removeprefix("NodeName=")
    return "\n".join(
        [
            "ClusterName=recenter-test",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={munge_socket}",
            f"StateSaveLocation={root / 'state'}",
            f"SlurmdSpoolDir={root / 'spool'}",
            f"SlurmctldPidFile={root / 'slurmctld.pid'}",
            f"SlurmdPidFile={root / 'slurmd.pid'}",
            f"SlurmctldLogFile={root / 'slurmctld.log'}",
            f"SlurmdLogFile={root / 'slurmd.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            # no systemd, no cgroups: track processes through /proc, no task containment
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "SchedulerType=sched/backfill",
            "MpiDefault=none",
            "ReturnToService=2",
            # no accounting daemon; finished jobs are written to a text file instead
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={root / 'jobcomp.log'}",
            node,
            "PartitionName=recenter Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


@dataclass
class LocalSlurm:
    """A running one-node cluster: its folder, config, daemons and job-completion log."""

    root: Path
    conf: Path
    jobcomp_log: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    #: what /etc/slurm/slurm.conf was before (None: nothing; else a symlink target or a backup)
    etc_backup: Path | None = None
    etc_was_symlink_to: str | None = None
    etc_created_dir: bool = False
    #: the open :data:`MACHINE_LOCK` (closed, so released, on shutdown)
    lock: Any = None

    @property
    def env(self) -> dict[str, str]:
        """The environment for SLURM client commands (sinfo, sbatch, ...) of this cluster."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def client(self, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return _run(list(cmd), timeout=timeout, env=self.env)

    def logs(self) -> str:
        """The daemons' logs, for a failure message that says why."""
        out = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            path = self.root / name
            if path.is_file():
                out.append(f"--- {name} (last lines)\n" + "\n".join(_tail(path, 25)))
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                out.append(f"--- {name} exited with {proc.returncode}")
        return "\n".join(out)

    def completed_jobs(self) -> dict[str, dict[str, str]]:
        """Job-completion log: SLURM job id -> its fields (JobState, Name, WorkDir, ...)."""
        if not self.jobcomp_log.is_file():
            return {}
        jobs = {}
        for line in self.jobcomp_log.read_text().splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "JobId" in fields:
                jobs[fields["JobId"]] = fields
        return jobs


def _tail(path: Path, n: int) -> list[str]:
    return path.read_text(errors="replace").splitlines()[-n:]


def _link_etc_conf(cluster: LocalSlurm) -> None:
    """Point /etc/slurm/slurm.conf at the cluster's config, remembering what was there."""
    if not ETC_CONF.parent.is_dir():
        ETC_CONF.parent.mkdir(parents=True)
        cluster.etc_created_dir = True
    if ETC_CONF.is_symlink():
        target = os.readlink(ETC_CONF)
        # a dangling link left by an earlier cluster of this module that was killed: drop it
        stale = Path(target).parent.name.startswith("recenter-slurm-") and not ETC_CONF.exists()
        if not stale:
            cluster.etc_was_symlink_to = target
        ETC_CONF.unlink()
    elif ETC_CONF.exists():
        cluster.etc_backup = cluster.root / "etc-slurm.conf.orig"
        shutil.move(ETC_CONF, cluster.etc_backup)
    ETC_CONF.symlink_to(cluster.conf)


def _restore_etc_conf(cluster: LocalSlurm) -> None:
    if ETC_CONF.is_symlink() and os.readlink(ETC_CONF) == str(cluster.conf):
        ETC_CONF.unlink()
    if cluster.etc_was_symlink_to is not None:
        ETC_CONF.symlink_to(cluster.etc_was_symlink_to)
    elif cluster.etc_backup is not None and cluster.etc_backup.exists():
        shutil.move(cluster.etc_backup, ETC_CONF)
    elif cluster.etc_created_dir:
        shutil.rmtree(ETC_CONF.parent, ignore_errors=True)


def _start(cluster: LocalSlurm, name: str, cmd: list[str]) -> None:
    with open(cluster.root / f"{name}.out", "wb") as out:  # the daemon keeps its own copy
        cluster.processes[name] = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=cluster.env, start_new_session=True
        )


def _wait_for(check, what: str, cluster: LocalSlurm, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        dead = [n for n, p in cluster.processes.items() if p.poll() is not None]
        if dead:
            break
        time.sleep(0.2)
    raise ClusterError(f"{what} (waited up to {timeout:.0f} s)\n{cluster.logs()}")


def _machine_lock(timeout: float):
    """:data:`MACHINE_LOCK`, held (an open file with an exclusive ``flock``, released by the
    kernel if this process dies), waiting up to ``timeout`` seconds for another cluster."""
    handle = open(MACHINE_LOCK, "a+")  # noqa: SIM115 - held until stop_cluster closes it
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                handle.close()
                raise ClusterError(
                    f"another local SLURM cluster held {MACHINE_LOCK} for {timeout:.0f} s "
                    f"(process {holder}); one runs at a time per machine"
                ) from None
            time.sleep(1)
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def start_cluster(timeout: float = 60, lock_timeout: float = 1500) -> LocalSlurm:
    """Write the config, start munged, slurmctld and slurmd, and wait until the node is idle.

    The folder is made under /tmp with mode 0755: munged refuses a socket unless every
    directory above it is a+x (``mktemp -d`` and pytest's tmp folders are 0700).
    """
    if os.geteuid() != 0:
        raise ClusterError("a local SLURM cluster needs root (slurmd runs jobs as their user)")
    lock = _machine_lock(lock_timeout)
    try:
        root = Path(tempfile.mkdtemp(prefix="recenter-slurm-", dir="/tmp"))
    except BaseException:
        lock.close()
        raise
    root.chmod(0o755)
    for sub in ("state", "spool", "munge"):
        (root / sub).mkdir()
    (root / "munge").chmod(0o755)
    munge_socket = root / "munge" / "munge.socket"
    cluster = LocalSlurm(
        root=root, conf=root / "slurm.conf", jobcomp_log=root / "jobcomp.log", lock=lock
    )
    try:
        cluster.conf.write_text(slurm_conf(root, munge_socket, node_line()))
        key = root / "munge.key"
        proc = _run(["mungekey", "-c", "-k", str(key)])
        if proc.returncode != 0:
            raise ClusterError(f"`mungekey -c -k {key}` failed: {proc.stderr}")
        key.chmod(0o600)
        _link_etc_conf(cluster)
        _start(
            cluster,
            "munged",
            [
                "munged",
                "-F",
                "--force",
                f"--socket={munge_socket}",
                f"--key-file={key}",
                f"--pid-file={root / 'munged.pid'}",
                f"--log-file={root / 'munged.log'}",
                f"--seed-file={root / 'munged.seed'}",
            ],
        )
        _wait_for(munge_socket.exists, "munged did not create its socket", cluster, timeout)
        _start(cluster, "slurmctld", ["slurmctld", "-D", "-i", "-f", str(cluster.conf)])
        _start(cluster, "slurmd", ["slurmd", "-D", "-f", str(cluster.conf)])

        def node_idle() -> bool:
            states = cluster.client("sinfo", "-h", "-o", "%T").stdout.split()
            return bool(states) and all(s == "idle" for s in states)

        _wait_for(node_idle, "the SLURM node never became idle", cluster, timeout)
    except BaseException:
        stop_cluster(cluster)
        raise
    return cluster


def stop_cluster(cluster: LocalSlurm) -> None:
    """Cancel leftover jobs, stop the daemons by PID, restore /etc/slurm/slurm.conf."""
    if cluster.processes.get("slurmctld") and cluster.processes["slurmctld"].poll() is None:
        cluster.client("scancel", "--full", "--user", "root", timeout=15)
    for name in ("slurmd", "slurmctld", "munged"):
        proc = cluster.processes.get(name)
        if proc is None or proc.poll() is not None:
            continue
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    _restore_etc_conf(cluster)
    if cluster.lock is not None:
        cluster.lock.close()
        cluster.lock = None
