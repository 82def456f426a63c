"""How `diff` is shown: text for the terminal, Markdown for a pull request comment. Both are rendered from the
diff as data (cli.diff.command.document), so they carry its numbers, formatted as `plan` formats dollars (review.cost);
an unknown figure is `unknown`, never $0. One arrow, `->`, as the words of a change (cli.diff.words) use. What
did not change is said in one line: the unchanged stacks ("39 stacks unchanged: ..."), and in a changed stack the
unchanged jobs ("8 unchanged, $7.85/h")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from gcp_training_jobs.jobspec.core.names import COMMAND, NAMESPACE
from gcp_training_jobs.jobspec.review.guardrails import GUARDRAILS_KEY
from gcp_training_jobs.jobspec.review.money import usd, usd_total

#: The hidden line a workflow finds its one comment by (and updates it instead of adding another).
MARKER = "<!-- gcp-training-jobs:diff -->"
UNKNOWN = "unknown"
#: At most this many unchanged stacks are named (then `and N more`).
MAX_NAMED = 12
#: The longest comment GitHub takes (65,536 characters), with room to spare.
MAX_COMMENT = 65_000


def money(value: float | None, per_hour: bool = True) -> str:
    """`$0.61/h`, `$1,234.56`; `unknown` for an unknown figure."""
    if value is None:
        return UNKNOWN
    return usd(value) if per_hour else usd_total(value)


def signed(value: float | None, per_hour: bool = True) -> str:
    """`+$0.61/h`, `-$2.00`, `±$0`; `unknown` for an unknown delta."""
    if value is None:
        return UNKNOWN
    if value == 0:
        return "±$0" + ("/h" if per_hour else "")
    return ("+" if value > 0 else "-") + money(abs(value), per_hour)


def guardrail_name(text: str) -> str:
    """`spotOnly` for `gcp-training-jobs:guardrails.spotOnly: ...`; a fixed rule's own name."""
    return text.partition(": ")[0].removeprefix(f"{GUARDRAILS_KEY}.").removeprefix(f"{NAMESPACE}:")


def headline(document: Mapping[str, Any]) -> str:
    """`+$4.21/h at the jobs' rates, worst case +$310.40; breaks spotOnly in staging`."""
    total = document["total"]
    line = (f"{signed(total['deltaUsdPerHour'])} at the jobs' rates, worst case "
            f"{signed(total['deltaWorstCaseUsd'], per_hour=False)}")
    broken = [f"{', '.join(dict.fromkeys(guardrail_name(t) for t in stack['guardrails']['broken']))} in {name}"
              for name, stack in document["stacks"].items() if stack["guardrails"]["broken"]]
    changed = [name for name, stack in document["stacks"].items() if stack["change"] != "unchanged"]
    if broken:
        return f"{line}; breaks {'; '.join(broken)}"
    return line if changed else f"no change to the stacks ({line})"


def total_label(document: Mapping[str, Any]) -> str:
    """`total of the changed stacks (prod, staging)`: what the change's total sums (diff.command: `total.stacks`)."""
    names = document["total"]["stacks"]
    return f"total of the changed stacks ({', '.join(names)})" if names else "total of the changed stacks (none)"


def all_stacks_line(document: Mapping[str, Any]) -> str:
    """`All stacks, changed or not (7): $/h $284.50/h -> $373.86/h; worst case ...`: every stack compared, labelled
    so (cli.diff.command: `allStacks`), never the change's total."""
    every = document["allStacks"]
    before, after = every["before"], every["after"]
    return (f"All stacks, changed or not ({len(document['stacks'])}): $/h {_side(before, 'usdPerHour', True)} -> "
            f"{_side(after, 'usdPerHour', True)}; worst case {_side(before, 'worstCaseUsd', False)} -> "
            f"{_side(after, 'worstCaseUsd', False)}")


def _side(figures: Mapping[str, Any] | None, key: str, per_hour: bool) -> str:
    return "—" if figures is None else money(figures[key], per_hour)


def _pair(item: Mapping[str, Any], key: str, delta: str, per_hour: bool) -> str:
    """`$0.61/h -> $1.22/h (+$0.61/h)`."""
    return (f"{_side(item['before'], key, per_hour)} -> {_side(item['after'], key, per_hour)} "
            f"({signed(item[delta], per_hour)})")


def _hourly(item: Mapping[str, Any]) -> str:
    return _pair(item, "usdPerHour", "deltaUsdPerHour", True)


def _worst(item: Mapping[str, Any]) -> str:
    return _pair(item, "worstCaseUsd", "deltaWorstCaseUsd", False)


def _quota_lines(stack: Mapping[str, Any]) -> list[str]:
    """`us-central1: custom_model_training_nvidia_l4_gpus 1 -> 2 (+1)`, for the metrics that change."""
    lines = []
    for region, metrics in stack["quota"].items():
        moved = [f"{metric} {n['before']} -> {n['after']} ({n['after'] - n['before']:+d})"
                 for metric, n in metrics.items() if n["before"] != n["after"]]
        if moved:
            lines.append(f"{region}: {', '.join(moved)}")
    return lines


def _held(stack: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Each persistent resource that changes: `persistent resource R: resized: its replicas change; $/h at the least
    $1.24/h -> $1.24/h (±$0/h), at the most $2.48/h -> $4.97/h (+$2.49/h)`, and what changed in words."""
    return [(f"persistent resource {name}: {item['change']}: {item['note']}; $/h at the least "
             f"{_pair(item, 'usdPerHourAtLeast', 'deltaUsdPerHourAtLeast', True)}, at the most {_hourly(item)}",
             list(item.get("changes", [])))
            for name, item in stack.get("persistentResources", {}).items() if item["change"] != "unchanged"]


def credential_lines(stack: Mapping[str, Any], *, markdown: bool = False) -> list[str]:
    """The credentials a stack's jobs hold (its `warnings`), one line each by field and kind, never the value."""
    return [f"{_code(w['path'])}: {w['credential']}" if markdown else f"{w['path']}: {w['credential']}"
            for warnings in (stack.get("warnings") or {}).values() for w in warnings if "credential" in w]


def _changed(document: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(name, stack) for name, stack in document["stacks"].items() if stack["change"] != "unchanged"]


def unchanged_stacks_line(document: Mapping[str, Any]) -> str:
    """`39 stacks unchanged: s01, s02, ... and 27 more`; "" when every stack changed."""
    names = [name for name, stack in document["stacks"].items() if stack["change"] == "unchanged"]
    if not names:
        return ""
    shown = ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")
    return f"{len(names)} stack{'s' if len(names) > 1 else ''} unchanged: {shown}"


def _known_sum(values: Iterable[float | None]) -> float | None:
    total = 0.0
    for value in values:
        if value is None:
            return None
        total += value
    return total


def unchanged_jobs(stack: Mapping[str, Any]) -> tuple[int, str, str]:
    """A changed stack's jobs that do not change: how many, their $/h and their worst case (the same on both sides;
    `unknown` with any unknown)."""
    kept = [job["after"] for job in stack["jobs"].values() if job["change"] == "unchanged"]
    return (len(kept), money(_known_sum(j["usdPerHour"] for j in kept)),
            money(_known_sum(j["worstCaseUsd"] for j in kept), per_hour=False))


def read_as(document: Mapping[str, Any]) -> str:
    """`online` when the diff read Google's side (the quotas, reservations and persistent resources of its changed
    stacks), else `offline`."""
    return "online" if document.get("online") else "offline"


def render_text(document: Mapping[str, Any]) -> str:
    out = [f"diff {document['base'][:12]} -> {document['head'][:12]} ({read_as(document)}, at the head's prices): "
           f"{headline(document)}"]
    for name, stack in _changed(document):
        out += ["", f"stack {name}: {stack['change']}"]
        out.append(f"    $/h at the jobs' rates {_hourly(stack)}; worst case {_worst(stack)}")
        out += [f"    budget: {stack['budget']['text']}"] if stack.get("budget") else []
        for job_name, job in stack["jobs"].items():
            if job["change"] == "unchanged":
                continue
            out.append(f"    {job_name}: {job['change']}: {job['note']}")
            out += [f"        {line}" for line in job.get("changes", [])]
            out.append(f"        $/h {_hourly(job)}; worst case {_worst(job)}")
        same, hourly, worst = unchanged_jobs(stack)
        out += [f"    {same} unchanged, {hourly}; worst case {worst}"] if same else []
        for line, words in _held(stack):
            out += [f"    {line}", *(f"        {w}" for w in words)]
        out += [f"    {kind} {what}" for kind, names in stack["resources"].items() for what in names]
        out += [f"    quota asked, {line}" for line in _quota_lines(stack)]
        out += [f"    credential (not shown): {line}" for line in credential_lines(stack)]
        out += [f"    breaks (the base kept it): {text}" for text in stack["guardrails"]["broken"]]
        kept = [t for t in stack["guardrails"]["after"] if t not in stack["guardrails"]["broken"]]
        out += [f"    still broken: {text}" for text in kept]
        out += _online_lines(stack, "    ")
        out += [f"    {line}" for line in cheaper_lines(stack)]
    out += ["", line] if (line := unchanged_stacks_line(document)) else []
    out += ["", f"{total_label(document)}: $/h at the jobs' rates {_hourly(document['total'])}; worst case "
            f"{_worst(document['total'])}", all_stacks_line(document)]
    out += [f"warning: {line}" for line in document["warnings"]]
    return "\n".join(out)


def _online_lines(stack: Mapping[str, Any], pad: str) -> list[str]:
    online = stack.get("online")
    if not online:
        return []
    headings = online.get("headings") or ["over quota"] * len(online["problems"])  # what each problem is over
    return [f"{pad}{line.strip()}" for line in online["lines"]] + [
        f"{pad}{heading}: {p}" for heading, p in zip(headings, online["problems"], strict=True)]


def cheaper_lines(stack: Mapping[str, Any]) -> list[str]:
    """`train: cheaper within the stack's placement: ...`, a job a line, and what the stack would save."""
    cheaper = stack.get("cheaper")
    if not cheaper:
        return []
    lines = [f"{name}: {text}" for name, text in cheaper["lines"].items()]
    saving = cheaper["savingUsdPerHour"]
    return lines + ([f"the stack would save {money(saving)} at its cheapest placements"] if saving else [])


#: What in a text GitHub would render as more than text: raw HTML (`<img>`, `</details>`) and character references
#: (`&#64;`), links and images (`[x](y)`, `![x](y)`), autolinks (`https://`, `www.`, `a@b.c`), @mentions, issue
#: references (`#12`), emphasis, strike-through, code, a table's `|`, a backslash escape. (`->` is text.)
_MARKUP: Final = re.compile(r"[<\[\]`*~@\\|]|&#|&[a-z]+;|#\d|://|www\.|(?<![a-z0-9])_|_(?![a-z0-9])", re.IGNORECASE)


def _code(text: str, *, in_table: bool = False) -> str:
    """`text` as one Markdown code span: inside one GitHub renders no HTML, link, image, emphasis or @mention. Fenced
    by one backtick more than the longest run in it; a newline is a space; in a table `|` is escaped (GFM reads a
    table's cells before their code spans)."""
    text = " ".join(text.splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    inner = f"{pad}{text}{pad}"
    return f"{fence}{inner.replace('|', chr(92) + '|') if in_table else inner}{fence}"


def md(text: str, *, in_table: bool = False) -> str:
    """Text from a job, a stack file or a stack's name, made safe for the pull request comment: as it is when it
    holds nothing GitHub would render (`_MARKUP`), else as a code span (`_code`), so that no HTML, link, image or
    mention written in a stack file reaches the rendered comment."""
    if _MARKUP.search(text) is None:
        return " ".join(text.splitlines())
    return _code(text, in_table=in_table)


def _cell(text: str) -> str:
    return md(text, in_table=True)


def _ours(text: str) -> str:
    """The project's own words, with their own code spans (`up`), on one line: a job's note (cli.diff.command), which
    holds no value but a job's name, judged to be lowercase letters, digits and hyphens."""
    return " ".join(text.splitlines())


def render_markdown(document: Mapping[str, Any], run_as: str = COMMAND) -> str:
    """The pull request comment: the headline, a table per changed stack, the broken guardrails, the per-part lines
    folded away, and the marker a workflow finds the comment by. `run_as`: the command as it was run
    (`gcp-training-jobs`, `python -m components`), which the comment names."""
    out = [MARKER, f"### Training jobs: {md(headline(document))}", "",
           f"Base `{document['base'][:12]}`, head `{document['head'][:12]}`; {read_as(document)} (`{run_as} diff"
           f"{' --online' if document.get('online') else ''}`), "
           "each job at the rate it runs at, the worst case its rate times its timeout (7 days when none), at the "
           "head's prices."]
    changed = _changed(document)
    if not changed:
        out += ["", "No stack changes."]
    for name, stack in changed:
        out += ["", f"#### {md(name)}: {stack['change']}", "",
                "| job | change | $/h before -> after | worst case before -> after |", "|---|---|---|---|"]
        for job_name, job in stack["jobs"].items():
            if job["change"] != "unchanged":
                out.append(f"| {_cell(job_name)} | {job['change']} | {_hourly(job)} | {_worst(job)} |")
        same, hourly, worst = unchanged_jobs(stack)
        out += [f"| {same} unchanged | — | {hourly} | {worst} |"] if same else []
        out.append(f"| **{_cell(name)}** | {stack['change']} | {_hourly(stack)} | {_worst(stack)} |")
        notes = [line for job_name, job in stack["jobs"].items() if job["change"] != "unchanged"
                 for line in [f"- {_code(job_name)} {job['change']}: {_ours(job['note'])}",
                              *(f"  - {md(words)}" for words in job.get("changes", []))]]
        notes += [item for line, words in _held(stack)
                  for item in [f"- {md(line)}", *(f"  - {md(w)}" for w in words)]]
        notes += [f"- {kind}: {', '.join(_code(n) for n in names)}" for kind, names in stack["resources"].items()
                  if names]
        notes += [f"- budget: {md(stack['budget']['text'])}"] if stack.get("budget") else []
        notes += [f"- quota asked, {md(line)}" for line in _quota_lines(stack)]
        notes += [f"- {md(line)}" for line in _online_lines(stack, "")]
        notes += [f"- {md(line)}" for line in cheaper_lines(stack)]
        out += ([""] + notes) if notes else []
        if credential_lines(stack):  # where the job sends one to Google in plain text
            out += ["", f"**Credentials in {md(name)}'s jobs** (sent to Google in plain text, visible to anyone who "
                    "can view the job; keep them in Secret Manager, or at the least `pulumi config set --secret`):", ""]
            out += [f"- {line}" for line in credential_lines(stack, markdown=True)]  # the path in a code span
        if stack["guardrails"]["broken"]:
            out += ["", f"**Guardrails {md(name)} breaks (the base kept them):**", ""]
            out += [f"- {md(text)}" for text in stack["guardrails"]["broken"]]
        kept = [t for t in stack["guardrails"]["after"] if t not in stack["guardrails"]["broken"]]
        if kept:
            out += ["", f"Still broken in {md(name)}:", ""] + [f"- {md(text)}" for text in kept]
    out += ["", f"{md(line)}."] if (line := unchanged_stacks_line(document)) else []
    out += ["", f"**{md(total_label(document).capitalize())}:** $/h {_hourly(document['total'])}; worst case "
            f"{_worst(document['total'])}", "", md(all_stacks_line(document))]
    if document["total"].get("placementSavingUsdPerHour"):
        out += ["", f"**At their cheapest placements within each stack's `placement`, the changed stacks would save "
                f"{money(document['total']['placementSavingUsdPerHour'])}.**"]
    details = [f"- {_code(name)} / {_code(job_name)} ({side}): {md(line)}"
               for name, stack in changed for job_name, job in stack["jobs"].items() if job["change"] != "unchanged"
               for side in ("before", "after") for line in job["partLines"][side]]
    out += [f"> warning: {md(line)}" for line in document["warnings"]]
    folded = ["", "<details><summary>Per-part lines</summary>", "", *details, "", "</details>"] if details else []
    text = "\n".join(out + folded)
    if len(text) > MAX_COMMENT:  # GitHub refuses a longer comment: the per-part lines are in `diff` itself
        text = "\n".join(out + ["", f"(The per-part lines are left out: the comment would pass GitHub's "
                                    f"{MAX_COMMENT:,} characters; `{run_as} diff` prints them.)"])
    return text


def render_unreadable(lines: list[str]) -> str:
    """The comment when a side cannot be read: what `diff` said, so that an earlier push's figures do not stay."""
    return "\n".join([MARKER, "### Training jobs: the diff cannot be made for this push", "", "```", *lines, "```"])
