"""Rules on Vertex AI's prebuilt training containers: an executorImageUri must be one, on its `latest` tag, and
no prebuilt image (executor, custom container or a runtime version's translation) may be past its end of
availability. Judged against catalog.vertex_containers (the prebuilt-containers page and the framework
support policy: "After this date, you can no longer use images for this framework version").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date

from components.jobspec import catalog
from components.jobspec.catalog import PrebuiltContainer
from components.jobspec.core.problems import Problem, allowed
from components.jobspec.rules.vertex_hardware import Setting
from components.jobspec.translate.pools import EXECUTOR, RUNTIME, Pool

_HOSTS = tuple(catalog.REGISTRY_HOSTS.values())
#: image name without tag ("vertex-ai/training/tf-gpu.2-17.py310") -> its row.
_BY_NAME = {c.image.rsplit(":", 1)[0]: c for c in catalog.PREBUILT_CONTAINERS}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _short(container: PrebuiltContainer) -> str:
    return container.image.rsplit("/", 1)[-1].rsplit(":", 1)[0]


def find(uri: str) -> tuple[PrebuiltContainer | None, str, str | None]:
    """(the prebuilt image a URI names, or None; its registry host; its tag, None when untagged)."""
    host, _, rest = uri.partition("/")
    name, colon, tag = rest.rpartition(":") if ":" in rest.rsplit("/", 1)[-1] else (rest, "", "")
    if host not in _HOSTS:
        return None, host, None
    return _BY_NAME.get(name), host, tag if colon else None


def available(container: PrebuiltContainer, today: date) -> bool:
    return container.end_of_availability is None or today <= container.end_of_availability


def newest_available(framework: str, processor: str, today: date) -> PrebuiltContainer | None:
    """The newest image of a framework for a processor still available on `today` (newest framework version,
    then newest Python)."""
    candidates = [c for c in catalog.PREBUILT_CONTAINERS
                  if c.framework == framework and c.processor == processor and available(c, today)]
    return max(candidates, key=lambda c: (_version(c.version), _version(c.python)), default=None)


def _replacement(container: PrebuiltContainer, host: str, today: date, custom: str) -> str:
    newer = newest_available(container.framework, container.processor, today)
    if newer is not None:
        until = newer.end_of_availability.isoformat() if newer.end_of_availability else "no date given"
        return f"{host}/{newer.image} (available until {until})"
    same = [c for c in catalog.PREBUILT_CONTAINERS if c.framework == container.framework]
    last = max(same, key=lambda c: (c.processor == container.processor, c.end_of_availability or date.max))
    ended = last.end_of_availability.isoformat() if last.end_of_availability else "?"
    newest = "" if last is container else f" (the last, {_short(last)}, until {ended})"
    return f"a custom container ({custom}): no prebuilt {container.framework} image is available any more{newest}"


def rule_prebuilt_images(pools: Sequence[Pool], s: Setting) -> Iterator[Problem]:
    """Prebuilt images only where a prebuilt image is required, on `latest`, and not past end of availability."""
    for pool in pools:
        for at, uri, kind in pool.images:
            container, host, tag = find(uri)
            if container is None:
                if kind == EXECUTOR:
                    yield Problem(at, f"{uri!r} is not a prebuilt training container; allowed: an image of the "
                                  "prebuilt containers page (HOST/vertex-ai/training/NAME:latest, HOST one of "
                                  f"{allowed(_HOSTS)}), or your own image in containerSpec.imageUri")
                continue
            if tag != "latest" and kind != RUNTIME:
                yield Problem(at, f"{uri!r}: prebuilt images are used on their latest tag only ('You must use an "
                              f"image with the latest tag'); allowed: {host}/{container.image}")
                continue
            if available(container, s.today):
                continue
            eoa = container.end_of_availability.isoformat() if container.end_of_availability else "?"
            what = (f"translates to the prebuilt container {_short(container)}, which" if kind == RUNTIME
                    else f"{_short(container)} ({container.framework} {container.version}, {container.processor})")
            yield Problem(at, f"{what} reached its end of availability on {eoa} "
                          f"({catalog.SOURCE_SUPPORT_POLICY.url}); allowed: "
                          f"{_replacement(container, host, s.today, pool.custom_container_field)}")
