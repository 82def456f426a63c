"""Rules on Vertex AI's prebuilt training containers: an executorImageUri must be one, on its `latest` tag, and
no prebuilt image (executor, custom container or a runtime version's translation) may be past its end of
availability. Judged against catalog.vertex_containers (the prebuilt-containers page and the framework
support policy: "After this date, you can no longer use images for this framework version").

The page grows: Google adds an image for each new framework version after any read of it. An image of a known
repository (`pytorch-gpu`, `tf-gpu`, `sklearn-cpu`, ...) at a framework version newer than every one the catalog
knows for that framework and processor is what the catalog cannot know: it is accepted, and a warning (a Notice)
names the page's read date and says its end of availability is not checked. A version the catalog should know (not
newer than its newest, yet not listed), a malformed name of a known version and a tag other than `latest` are
still refused, as is a known image past its end of availability.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date

from gcp_training_jobs.jobspec import catalog
from gcp_training_jobs.jobspec.catalog import PrebuiltContainer
from gcp_training_jobs.jobspec.core.names import unexpanded_problem
from gcp_training_jobs.jobspec.core.problems import Notice, Problem, allowed
from gcp_training_jobs.jobspec.rules.vertex_hardware import Setting
from gcp_training_jobs.jobspec.translate.pools import EXECUTOR, RUNTIME, Pool

_HOSTS = tuple(catalog.REGISTRY_HOSTS.values())
#: image name without tag ("vertex-ai/training/tf-gpu.2-17.py310") -> its row.
_BY_NAME = {c.image.rsplit(":", 1)[0]: c for c in catalog.PREBUILT_CONTAINERS}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _short(container: PrebuiltContainer) -> str:
    return container.image.rsplit("/", 1)[-1].rsplit(":", 1)[0]


def _newest_by_repository() -> dict[str, PrebuiltContainer]:
    """Repository ("pytorch-gpu") -> the newest image the catalog knows of its framework and processor, for the
    repository that newest image is published under (older namings, scikit-learn-cpu or pytorch-cpu, are not
    where a new version appears)."""
    newest: dict[tuple[str, str], PrebuiltContainer] = {}
    for c in catalog.PREBUILT_CONTAINERS:
        key = (c.framework, c.processor)
        if key not in newest or (_version(c.version), _version(c.python)) > (_version(newest[key].version),
                                                                             _version(newest[key].python)):
            newest[key] = c
    found: dict[str, PrebuiltContainer] = {}
    for c in newest.values():
        match = catalog.IMAGE_NAME.fullmatch(c.image.rsplit(":", 1)[0])
        if match is not None:
            found[match["repository"]] = c
    return found


_NEWEST = _newest_by_repository()


def newer_than_known(name: str) -> tuple[str, PrebuiltContainer] | None:
    """(the framework version, the newest image the catalog knows of its framework and processor) when `name`
    (an image without host and tag) is a well-formed image of a known repository at a newer version; else None."""
    match = catalog.IMAGE_NAME.fullmatch(name)
    newest = _NEWEST.get(match["repository"]) if match is not None else None
    if match is None or newest is None:
        return None
    version = f"{int(match['major'])}.{int(match['minor'])}"
    return (version, newest) if _version(version) > _version(newest.version) else None


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
    """No variable left unexpanded in an image; prebuilt images only where a prebuilt image is required, on `latest`,
    and not past end of availability."""
    for pool in pools:
        for at, uri, kind in pool.images:
            if (unexpanded := unexpanded_problem(uri)) is not None:
                yield Problem(at, unexpanded)
                continue
            container, host, tag = find(uri)
            newer = newer_than_known(uri.partition("/")[2].rsplit(":", 1)[0]) if container is None and \
                host in _HOSTS and kind != RUNTIME else None
            if newer is not None:
                yield from _unknown_image(at, uri, host, tag, *newer)
                continue
            if container is None:
                if kind == EXECUTOR:
                    yield Problem(at, f"{uri!r} is not a prebuilt training container; allowed: an image of the "
                                  "prebuilt containers page (HOST/vertex-ai/training/NAME:latest, HOST one of "
                                  f"{allowed(_HOSTS)}; a framework version newer than the page's, read "
                                  f"{catalog.SOURCE_PREBUILT.read.isoformat()}, with a warning), or your own image in "
                                  "containerSpec.imageUri")
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


def _unknown_image(at: str, uri: str, host: str, tag: str | None, version: str,
                   newest: PrebuiltContainer) -> Iterator[Problem]:
    """A prebuilt image newer than the catalog's page: refused on another tag than `latest`, else a Notice."""
    name = uri.partition("/")[2].rsplit(":", 1)[0]
    if tag != "latest":
        yield Problem(at, f"{uri!r}: prebuilt images are used on their latest tag only ('You must use an image with "
                      f"the latest tag'); allowed: {host}/{name}:latest")
        return
    read = catalog.SOURCE_PREBUILT.read.isoformat()
    yield Notice(at, f"{name.rsplit('/', 1)[-1]} ({newest.framework} {version}, {newest.processor}) is newer than "
                 f"every {newest.framework} {newest.processor} image the catalog knows (up to {_short(newest)}, "
                 f"from the prebuilt containers page read {read}, {catalog.SOURCE_PREBUILT.url}); accepted, its end "
                 "of availability is not checked")
