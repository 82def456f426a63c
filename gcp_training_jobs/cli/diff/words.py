"""What changed in a job, in a reviewer's words, one line per field (`diff`): the accelerators ("8 -> 16
NVIDIA_H100_80GB"), each pool's machine type and replica count, the strategy, the region, the timeout, the image
(its tag), the reservations (how many machines the job needs from each, and its affinity type and name as plan
says it: "needs 2 a3-highgpu-8g from reservation R, was 1 (SPECIFIC_RESERVATION projects/P/zones/Z/reservations/R)"),
the persistent resource, the boot disks, the fallbacks (each with its region, machine, strategy and $/h), the args
and command value by value ("args --epochs=5 -> --epochs=10") and the env by name, each credential masked
(catalog.credentials); the fields those lines do not cover, as the paths that changed.

The words are read from the two sides' facts as judged (`JobSettings.facts`, its pools, and `cli.plan.placement`),
never from the bodies again; the paths are `cli.diff.command.changed_paths` of the inputs the program registered, and
the args, command and env values are read at those paths of the same inputs (`job_model.inputs.spec_of`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gcp_training_jobs.cli.plan.placement import ReservationNeed, reservation_needs
from gcp_training_jobs.jobspec.catalog.credentials import masked, masked_text
from gcp_training_jobs.jobspec.review.money import hours_text
from gcp_training_jobs.jobspec.translate.facts import JobFacts
from gcp_training_jobs.jobspec.translate.pools import Pool

#: At most this many lines of words for a job (then `and N more`); its JSON `fields` holds every path.
MAX_LINES = 6
#: At most this many paths on the `also changed` line.
MAX_PATHS = 6
ARROW = "->"
#: The paths the words say (a pool's machine, accelerators and replicas, scheduling, region, images, reservation,
#: persistent resource; a trainingInput's machine types, counts and running time).
COVERED = re.compile(
    r"(machineSpec\.(machineType|acceleratorType|acceleratorCount|reservationAffinity)|\.replicaCount$"
    r"|scheduling\.(strategy|timeout|maxRunningTime)$|(^|\.)region$|imageUri$|executorImageUri$"
    r"|persistentResourceId$|(master|worker|parameterServer|evaluator)(Type|Count)$|acceleratorConfig"
    r"|\.scaleTier$|diskSpec(\.bootDisk(Type|SizeGb))?$"
    r"|(^|\.)(args|command|env)(\[\d+\](\.(name|value))?)?$)")
#: A list said value by value, and the path of the list a changed path is in: `...containerSpec.args[0]`,
#: `trainingInput.args`, `...env[1].value`.
VALUES = re.compile(r"^(?P<list>(?:.*\.)?(?P<kind>args|command|env))(?:\[\d+\](?:\.(?:name|value))?)?$")
#: The pool a path is in.
POOL = re.compile(r"workerPoolSpecs\[(\d+)\]")
#: A value longer than this is cut (its end as `...`).
MAX_VALUE = 80


def _arrow(old: Any, new: Any) -> str:
    return f"{old} {ARROW} {new}"


def _accelerators(old: Mapping[str, int], new: Mapping[str, int]) -> list[str]:
    """`8 -> 16 NVIDIA_H100_80GB`; `8 NVIDIA_A100_80GB -> 8 NVIDIA_H100_80GB` when the type changes."""
    if dict(old) == dict(new):
        return []
    if len(old) == len(new) == 1 and set(old) == set(new):
        (kind, before), (after,) = next(iter(old.items())), new.values()
        return [f"{_arrow(before, after)} {kind}"]

    def said(totals: Mapping[str, int]) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in totals.items()) or "no accelerators"

    return [_arrow(said(old), said(new))]


def _by_index(facts: JobFacts) -> dict[int, Pool]:
    return {pool.index: pool for pool in facts.running}


def _pools(old: JobFacts, new: JobFacts) -> list[str]:
    """Each pool's machine type and replicas that changed; a pool added or removed, with what it holds."""
    before, after = _by_index(old), _by_index(new)
    several = len(set(before) | set(after)) > 1
    lines = []
    for index in sorted(set(before) | set(after)):
        label = f"pool {index} " if several else ""
        was, now = before.get(index), after.get(index)
        if was is None and now is not None:
            lines.append(f"pool {index} added: {new.pool_text(now)}")
        elif now is None and was is not None:
            lines.append(f"pool {index} removed (was {old.pool_text(was)})")
        elif was is not None and now is not None:
            if was.machine_type != now.machine_type:
                lines.append(f"{label}machine type {_arrow(was.machine_type, now.machine_type)}")
            if was.replica_count != now.replica_count:
                lines.append(f"{label}replicas {_arrow(was.replica_count, now.replica_count)}")
    return lines


def _timeout(facts: JobFacts) -> str:
    said = hours_text(facts.timeout.hours)
    return said if facts.timeout.set else f"{said} ({facts.timeout.default_of}'s default)"


def image_text(old: str, new: str) -> str:
    """`image example 0.1 -> 0.2` for a new tag (or digest) of the same image; both URIs when the image changed."""
    repo_old, _, tag_old = _split_image(old)
    repo_new, _, tag_new = _split_image(new)
    if repo_old == repo_new:
        return f"image {repo_new.rsplit('/', 1)[-1]} {_arrow(tag_old or 'latest', tag_new or 'latest')}"
    return f"image {_arrow(old, new)}"


def _split_image(uri: str) -> tuple[str, str, str]:
    """(repository, separator, tag or digest): `host/p/r/img:0.1` -> (`host/p/r/img`, `:`, `0.1`)."""
    if "@" in uri:
        return uri.partition("@")
    head, _, last = uri.rpartition("/")
    name, sep, tag = last.partition(":")
    return (f"{head}/{name}" if head else name), sep, tag


def _images(old: JobFacts, new: JobFacts) -> list[str]:
    """The images the pools run, by where they are written (a pool's container, its package's executor)."""
    before = {path: uri for pool in old.running for path, uri, _ in pool.images}
    after = {path: uri for pool in new.running for path, uri, _ in pool.images}
    changed = dict.fromkeys(image_text(before[p], after[p]) for p in after if p in before and before[p] != after[p])
    return list(changed)


def needs_lines(old: Sequence[ReservationNeed], new: Sequence[ReservationNeed]) -> list[str]:
    """The reservations the job takes machines from, each with what it needed before and its reservationAffinity as
    plan says it (type and name): `needs 2 a3-highgpu-8g from reservation R, was 1 (SPECIFIC_RESERVATION
    projects/P/zones/Z/reservations/R)` (`was 0` where the job took none from it, `needs 0` where it takes none any
    more). When any of them moved, every one the job takes from is said, so a job on two reservations reads as on
    both."""
    before = {need.key: need for need in old}
    after = {need.key: need for need in new}
    if {k: n.machines for k, n in before.items()} == {k: n.machines for k, n in after.items()}:
        return []
    lines = [f"needs {need.text()}, was {before[key].machines if key in before else 0} ({need.affinity()})"
             for key, need in after.items()]
    lines += [f"needs 0 {need.machine_type} from {need.source()}, was {need.machines} ({need.affinity()})"
              for key, need in before.items() if key not in after]
    return lines


def _persistent(old: JobFacts, new: JobFacts) -> list[str]:
    was, now = old.runs_on.persistent_resource_id, new.runs_on.persistent_resource_id
    if was == now:
        return []
    return [f"persistent resource {_arrow(was or 'none (its own machines)', now or 'none (its own machines)')}"]


def _fallbacks(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Each fallback that changed, in order, as plan says it (cli.plan.placement: region, machine, strategy, $/h):
    `fallback 1: us-central1, a3-highgpu-8g x1 + 8 NVIDIA_H100_80GB, SPOT, $40.10/h -> ..., $80.20/h`; one added
    or removed said so. A fallback's price that moved shows."""
    before = [f["text"] for f in old.get("fallbacks", ())]
    after = [f["text"] for f in new.get("fallbacks", ())]
    lines = []
    for i in range(max(len(before), len(after))):
        if i >= len(before):
            lines.append(f"fallback {i + 1} added: {after[i]}")
        elif i >= len(after):
            lines.append(f"fallback {i + 1} removed (was {before[i]})")
        elif before[i] != after[i]:
            lines.append(f"fallback {i + 1}: {_arrow(before[i], after[i])}")
    return lines


def _at(data: Any, path: str) -> Any:
    """The value at a path as changed_paths spells it (`a.b[0].c`), or None."""
    for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if key:
            data = data.get(key) if isinstance(data, Mapping) else None
        else:
            data = data[int(index)] if isinstance(data, list) and int(index) < len(data) else None
    return data


def _shown(value: Any) -> str:
    """A value as the words say it: its credentials masked, a long one cut."""
    text = masked_text(str(value))
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 3] + "..."


def _list_lines(label: str, was: Any, now: Any) -> list[str]:
    """`args --epochs=5 -> --epochs=10`, `args added --steps=10`, `args removed --resume`, as a diff of the lists."""
    before = [_shown(v) for v in (was if isinstance(was, list) else [] if was is None else [was])]
    after = [_shown(v) for v in (now if isinstance(now, list) else [] if now is None else [now])]
    lines = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op == "replace":
            lines.append(f"{label} {_arrow(' '.join(before[i1:i2]), ' '.join(after[j1:j2]))}")
        elif op == "delete":
            lines.append(f"{label} removed {' '.join(before[i1:i2])}")
        elif op == "insert":
            lines.append(f"{label} added {' '.join(after[j1:j2])}")
    return lines


def _env(value: Any) -> dict[str, str]:
    """An env list as name -> value as shown, each entry masked as a whole (a credential found by its name too)."""
    found = {}
    for entry in value if isinstance(value, list) else []:
        if isinstance(entry, Mapping):
            shown = masked(dict(entry)).value
            found[str(entry.get("name"))] = _shown(shown.get("value", ""))
    return found


def _env_lines(label: str, was: Any, now: Any) -> list[str]:
    """`env WANDB_PROJECT a -> b`, `env SEED=1 added`, `env DEBUG removed`."""
    before, after = _env(was), _env(now)
    lines = []
    for name in dict.fromkeys([*before, *after]):
        if name not in before:
            lines.append(f"{label} {name}={after[name]} added")
        elif name not in after:
            lines.append(f"{label} {name} removed")
        elif before[name] != after[name]:
            lines.append(f"{label} {name} {_arrow(before[name], after[name])}")
    return lines


def value_lines(specs: tuple[Any, Any], paths: Sequence[str], several: bool = False) -> list[str]:
    """The args, command and env that changed, value by value, from the two sides' specs at the changed paths
    (`pool N ` before each when the job has several pools)."""
    lines = []
    for path in dict.fromkeys(m.group("list") for p in paths if (m := VALUES.match(p))):
        kind = path.rsplit(".", 1)[-1]
        pool = POOL.search(path)
        label = (f"pool {pool.group(1)} " if pool and several else "") + kind
        was, now = _at(specs[0], path), _at(specs[1], path)
        lines += _env_lines(label, was, now) if kind == "env" else _list_lines(label, was, now)
    return lines


def words(old: JobFacts, new: JobFacts, paths: Sequence[str], placements: tuple[Mapping[str, Any], Mapping[str, Any]]
          = ({}, {}), specs: tuple[Any, Any] = ({}, {})) -> list[str]:
    """What changed between two sides of a job, a line per field; the paths no line covers on the last line.
    `specs`: the two sides' specs the paths are of (job_model.inputs.spec_of), for the values of args, command and
    env."""
    lines = _accelerators(old.accelerator_totals, new.accelerator_totals) + _pools(old, new)
    if old.strategy != new.strategy:
        lines.append(f"strategy {_arrow(old.strategy or 'STANDARD', new.strategy or 'STANDARD')}")
    if old.region != new.region:
        lines.append(f"region {_arrow(old.region, new.region)}")
    if (old.timeout.seconds, old.timeout.set) != (new.timeout.seconds, new.timeout.set):
        lines.append(f"timeout {_arrow(_timeout(old), _timeout(new))}")
    lines += _images(old, new) + value_lines(specs, paths, len(set(_by_index(old)) | set(_by_index(new))) > 1) \
        + _persistent(old, new) \
        + _disks(*placements, set(_by_index(old)) & set(_by_index(new))) \
        + _fallbacks(*placements)
    needs = needs_lines(reservation_needs(old), reservation_needs(new))  # always said, whatever else is cut
    room = max(MAX_LINES - len(needs), 1)
    if len(lines) > room:
        lines = lines[:room - 1] + [f"and {len(lines) - room + 1} more"]
    lines += needs
    pools_moved = set(_by_index(old)) != set(_by_index(new))  # said as `pool N added` / `removed` above
    rest = [path for path in paths if not lines or not COVERED.search(path)  # no words: every path
            and not (pools_moved and path.endswith("workerPoolSpecs"))]
    if rest:
        shown = rest[:MAX_PATHS] + ([f"{len(rest) - MAX_PATHS} more"] if len(rest) > MAX_PATHS else [])
        lines.append(f"also changed: {', '.join(shown)}")
    return lines


def added_words(new: JobFacts, placement: Mapping[str, Any] | None = None) -> list[str]:
    """What an added job takes that a reviewer weighs: the reservation machines, the persistent resource, its
    non-default disks and its fallbacks (`placement`: cli.plan.placement's, as plan --json gives it)."""
    placement = placement or {}
    lines = [f"needs {need.text()} ({need.affinity()})" for need in reservation_needs(new)]
    if new.runs_on.persistent_resource_id:
        lines.append(f"runs on persistent resource {new.runs_on.persistent_resource_id}")
    lines += [f"pool {d['pool']} disk {_disk(d)}" for d in placement.get("disks", ())]
    lines += [f"fallback {i + 1}: {f['text']}" for i, f in enumerate(placement.get("fallbacks", ()))]
    return lines


def _disk(disk: Mapping[str, Any] | None) -> str:
    return f"{disk['bootDiskType']} {disk['bootDiskSizeGb']} GB" if disk else "the default"


def _disks(old: Mapping[str, Any], new: Mapping[str, Any], pools: set[int]) -> list[str]:
    """`pool 0 disk the default -> pd-standard 500 GB` for the pools on both sides (cli.plan.placement: the disks
    that are not Vertex's default)."""
    before = {d["pool"]: d for d in old.get("disks", ())}
    after = {d["pool"]: d for d in new.get("disks", ())}
    return [f"pool {pool} disk {_arrow(_disk(before.get(pool)), _disk(after.get(pool)))}"
            for pool in sorted((set(before) | set(after)) & pools) if _disk(before.get(pool)) != _disk(after.get(pool))]
