"""The catalog of faults the doctor must survive, with the outcome each one must produce.

One entry per fault: how the test creates it, the verdict, the exit code and the words of the
reason. The tests assert exactly these values (`FAULTS[id]`), mark themselves with `@covers(id)`,
and `docs/reliability.md` holds the table `table()` renders: test_reliability_doc.py checks that
the three agree, so the document cannot drift from what is tested.

Run `python tests/fault_canaries/faults.py` to print the table for the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, TypeVar

F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class Fault:
    id: str
    group: str
    created: str  # how the test creates it, for real
    verdict: str  # the status (and which issue), or what happens instead
    exit: str  # the exit code, as the contract says
    reason: str  # words that must appear in the reason or the message


FAULTS: Dict[str, Fault] = {}
COVERED: Dict[str, List[str]] = {}


def _add(*faults: Fault) -> None:
    for f in faults:
        assert f.id not in FAULTS, f.id
        FAULTS[f.id] = f


def covers(*ids: str) -> Callable[[F], F]:
    """Marks a test as the one that creates these faults; unknown ids fail at import."""

    def mark(fn: F) -> F:
        for i in ids:
            if i not in FAULTS:
                raise KeyError(f"{i!r} is not in tests/fault_canaries/faults.py")
            COVERED.setdefault(i, []).append(fn.__name__)
        return fn

    return mark


_add(
    # --- canaries (the patients) -------------------------------------------------------------
    Fault("canary-segfault", "canary", "a canary dereferences NULL (ctypes.string_at(0))",
          "inconclusive", "0 (1 with --fail-on inconclusive)",
          "canary crashed with SIGSEGV, which is not this issue's signature"),
    Fault("canary-abort", "canary", "a canary calls os.abort()",
          "inconclusive", "0", "canary crashed with SIGABRT, which is not this issue's signature"),
    Fault("canary-abort-is-the-bug", "canary",
          "the same abort, with the issue's own words (its signature) in what it printed",
          "affected", "1", "donor hash mismatch (SIGABRT)"),
    Fault("canary-abort-xla", "canary",
          "real torch_xla 2.5.1 on CPU: the donated-buffer check (xla-donor-hash) fails in PJRT",
          "affected (xla-donor-hash)", "1", "called on deleted or donated buffer"),
    Fault("canary-hang", "canary",
          "a canary sleeps for an hour, with a child in its group and a grandchild that called setsid",
          "inconclusive", "0", "canary timed out after 2s"),
    Fault("canary-unreapable", "canary",
          "a hung canary that cannot be reaped once killed (a ptrace tracer in another session holds its "
          "exit, as a hung GPU driver would)",
          "inconclusive, within --timeout plus a 5 s grace; named as left behind", "0",
          "could not be killed"),
    Fault("canary-noise", "canary", "a canary writes 24 MB of binary noise to stdout and stderr, then fails",
          "affected (its signature is found after the noise); report stays small", "1",
          "canary reproduced it: FAULT-SIGNATURE"),
    Fault("canary-no-result", "canary", "a canary leaves with os._exit(0), before the harness reports",
          "inconclusive", "0", "canary exited (code 0) without reporting a result"),
    # --- the interpreter under diagnosis --------------------------------------------------------
    Fault("python-missing", "target", "--python names a file that does not exist",
          "usage error, one line", "2", "no such file"),
    Fault("python-not-executable", "target", "--python names a text file (no execute bit)",
          "usage error, one line", "2", "not executable"),
    Fault("python-not-python", "target",
          "--python names an executable that is not Python (a shell script, /bin/false)",
          "usage error, one line", "2", "not a usable Python interpreter"),
    Fault("python-without-torch", "target", "--python names a fresh venv with no packages",
          "not-applicable for every issue", "0", "not installed"),
    Fault("torch-import-fails", "target",
          "--python names a venv whose torch 2.9.0 lacks its dependencies (import torch fails)",
          "inconclusive for canary checks, with the ImportError", "0",
          "canary failed, but not with this issue's signature: ModuleNotFoundError"),
    # --- the toolchain ------------------------------------------------------------------------------
    Fault("no-compiler", "toolchain", "PATH holds only python; CC and CXX unset",
          "affected (cxx-compiler-missing, reproduced by its canary)", "1", "No working C++ compiler found"),
    Fault("compiler-hangs", "toolchain", "CXX is a g++ that sleeps for 10 minutes",
          "inconclusive (const-data-ptr-abi) with the timeout; affected (cxx-compiler-missing): found, "
          "but does not answer; the probe's time limits hold", "1",
          "timed out after"),
    # --- disks, homes and caches ------------------------------------------------------------------
    Fault("cache-dir-read-only", "files", "INDUCTOR_DOCTOR_CACHE_DIR on a read-only tmpfs",
          "the check runs; the report notes that nothing could be kept", "0", "not kept"),
    Fault("home-read-only", "files", "HOME on a read-only tmpfs, no XDG_CACHE_HOME",
          "the check runs; the report notes that nothing could be kept", "0", "not kept"),
    Fault("home-unset", "files", "HOME unset",
          "the check runs; the cache goes under the passwd home, never /nonexistent", "0", ""),
    Fault("cache-corrupt", "files",
          "a kept canary outcome truncated, garbage, a foreign key, a directory, nested 100 000 deep",
          "a cache miss: the check runs again and rewrites it", "0", ""),
    Fault("tmp-full", "files", "TMPDIR on a 64 KiB tmpfs that a noisy canary fills",
          "inconclusive, saying the temporary directory filled up", "0",
          "filled up (no space left on device)"),
    Fault("output-unwritable", "files", "check --output and merge --output into a read-only directory",
          "one-line error naming the file", "2", "cannot write"),
    # --- signals and concurrency --------------------------------------------------------------------
    Fault("sigint-mid-run", "signals",
          "Ctrl-C (SIGINT to the process group) with two hanging canaries in flight and one finished",
          "partial results printed (finished: ok; in flight: inconclusive); every canary killed", "130",
          "interrupted before the canary finished"),
    Fault("sigterm-mid-run", "signals", "SIGTERM to the doctor with two hanging canaries in flight",
          "partial results printed; every canary killed", "143", "interrupted before the canary finished"),
    Fault("sigint-during-probe", "signals", "SIGINT to the process group while the probe is still running",
          "no report (nothing was checked yet), no traceback, nothing left running", "130", ""),
    Fault("concurrent-runs", "concurrency", "three checks at once sharing one cache directory",
          "identical results; one valid canary outcome kept (0600); the next run reuses it", "0", ""),
    # --- security ---------------------------------------------------------------------------------------
    Fault("secrets-in-env", "security",
          "tokens in TORCH*/TRITON* variables, a user name in HOME paths",
          "redacted in markdown by default and with --redact; --no-redact keeps them", "0", "<redacted>"),
    Fault("no-network", "security",
          "check in a network namespace with no interfaces (unshare -n), and a connect() audit",
          "same verdicts as with a network; no process of the tree calls connect()", "0", ""),
    Fault("hostile-log", "security", "explain --log with $(…), backticks and ; rm in it",
          "nothing executed; triaged as text", "0 or 1", ""),
    Fault("hostile-report", "security", "merge of a report whose reasons, host and commands are shell",
          "nothing executed; shown as text", "1", ""),
    Fault("cache-permissions", "security", "a fresh cache directory",
          "results written atomically, file 0600, directories the doctor creates 0700", "0", ""),
    Fault("cache-dir-foreign", "security",
          "INDUCTOR_DOCTOR_CACHE_DIR owned by another user (nobody), holding records planted by them "
          "(a compiler identity 'clang 99.9.9')",
          "refused with one warning line; the check runs uncached, writes nothing there, and the planted "
          "identity appears nowhere", "0", "is not used"),
    Fault("cache-dir-shared", "security",
          "INDUCTOR_DOCTOR_CACHE_DIR a world-writable sticky directory (a /tmp-style path) of root's, "
          "with records another user put there",
          "refused with one warning line, as above", "0", "is writable by others"),
    Fault("record-foreign", "security",
          "a record owned by another user planted in a cache directory of the user's own",
          "not read: a cache miss, the compiler asked afresh", "0", ""),
    # --- suppressions -----------------------------------------------------------------------------------
    Fault("suppression-expired", "suppressions", "[[suppress]] with until = yesterday",
          "not honoured; the report says it expired", "1", "expired on"),
    Fault("config-malformed", "suppressions",
          "inductor-doctor.toml that is not TOML, lacks a reason, or has a bad date or an unknown id",
          "usage error, one line naming the file", "2", ""),
    Fault("endless-input", "fuzz",
          "explain --log /dev/zero; plan -r of a file that includes -r /dev/zero (memory capped at 2 GiB)",
          "usage error, one line, at once: what is read is capped", "2", ""),
    Fault("fuzzed-input", "fuzz", "random bytes as explain --log, plan -r and the config file (hypothesis)",
          "never a traceback", "0, 1 or 2 only", ""),
    # --- fleet ----------------------------------------------------------------------------------------
    Fault("rank-hangs", "fleet", "under torchrun, rank 1's canary hangs (600 s timeout)",
          "rank 1 named as missing after the gather timeout, rank 0 reported; rank 1 then stops", "0",
          "joined, but sent no report within"),
    Fault("rank-dies", "fleet", "under torchrun, rank 1's doctor is SIGKILLed mid-check",
          "named at once as dead; the others reported", "0 (rank 0)", "died before its check finished"),
    Fault("rank-never-joins", "fleet", "under torchrun, rank 1 exits before starting the doctor",
          "named (node, local rank) as never joined", "1 with --fail-on inconclusive",
          "never joined within"),
    Fault("report-malformed", "fleet",
          "merge of a truncated, binary, empty, deeply nested or foreign JSON file",
          "usage error, one line naming the file and what is wrong with it", "2", ""),
)

HEADER = "| fault | how the test creates it | outcome | exit | reason shown |\n|---|---|---|---|---|"


def table() -> str:
    rows = [HEADER]
    for f in FAULTS.values():
        reason = f"`{f.reason}`" if f.reason else "—"
        rows.append(f"| `{f.id}` | {f.created} | {f.verdict} | {f.exit} | {reason} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(table(), end="")
