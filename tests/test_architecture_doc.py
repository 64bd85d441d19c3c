"""docs/architecture.md names only code that exists: every module and function it names in a
code span, read with `ast` (no module is imported).

What the map names, and how this test reads it:
- a path, `app/lake/commit.py` or a folder `workers/maintenance/`: it exists;
- a module's function or class, `app/lake/commit.commit`, `app/lake/commit.py:commit`, the
  dotted `app.lake.commit.commit`, or a path's code span followed by a name's,
  `app/batches/endpoints.py` `batches_act`: the module defines it (a method or field:
  `app/jobs/reconciler.Reconciler.run`);
- a short `module.name` (`runtime.settle`, `tombstones.TombstoneList`) whose first part is the
  name of a module of app/ or workers/ (and of no package): one module of that name defines it;
- the domains table: its API column's folders are under app/, its worker column's under workers/.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "architecture.md"
CODE = re.compile(r"`([^`\n]+)`")
NAME = r"[A-Za-z_]\w*"
# `app/x/y.py`, `app/x/y.py:name`, `app/x/y.name.attr`, `workers/x/`
PATH_SPAN = re.compile(
    rf"^(?P<path>(?:app|workers)(?:/{NAME})*)(?P<ext>\.py|/)?(?::(?P<colon>{NAME}(?:\.{NAME})*)"
    rf"|\.(?P<dotted>{NAME}(?:\.{NAME})*))?$"
)
DOTTED_SPAN = re.compile(rf"^(?P<name>(?:app|workers)(?:\.{NAME})+)$")
SHORT_SPAN = re.compile(rf"^(?P<module>{NAME})\.(?P<name>(?!py$){NAME}(?:\.{NAME})*)(?:\(.*\))?$")
# a path's span, then (blanks only between) a name's span: `file.py` `function`
ADJACENT = re.compile(rf"`(?P<path>(?:app|workers)/[\w/]+\.py)`\s+`(?P<name>{NAME})(?:\(.*?\))?`")


def _top_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module's (or class's) body binds, `if`/`try` blocks included."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.If | ast.Try):
            blocks = [node.body, node.orelse]
            if isinstance(node, ast.Try):
                blocks += [node.finalbody, *(h.body for h in node.handlers)]
            for block in blocks:
                names.update(_top_names(block))
    return names


@cache
def _module_names(path: Path) -> dict[str, ast.AST]:
    return _top_names(ast.parse(path.read_text(), str(path)).body)


def defines(module: Path, dotted: str) -> bool:
    """`module` (a .py file) binds `dotted` (`name` or `Class.member`...)."""
    names = _module_names(module)
    parts = dotted.split(".")
    node = names.get(parts[0])
    for part in parts[1:]:
        if not isinstance(node, ast.ClassDef):
            return False
        members = _top_names(node.body)
        if part not in members:  # a field assigned in __init__ (self.x = ...) counts too
            inits = [m for m in node.body if isinstance(m, ast.FunctionDef)]
            attrs = {
                t.attr
                for m in inits
                for t in ast.walk(m)
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                if t.value.id == "self" and isinstance(t.ctx, ast.Store)
            }
            return part in attrs
        node = members[part]
    return node is not None


def _module_file(parts: list[str]) -> Path | None:
    """The file of the module `parts` (a package: its `__init__.py`)."""
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def resolve_dotted(dotted: str) -> bool:
    """`app.lake.commit.commit`: the longest prefix that is a module, then names in it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is not None:
            return cut == len(parts) or defines(module, ".".join(parts[cut:]))
    return False


@cache
def modules_by_name() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for top in ("app", "workers"):
        for path in (ROOT / top).rglob("*.py"):
            if path.stem != "__init__":
                found.setdefault(path.stem, []).append(path)
    return found


@cache
def short_modules() -> dict[str, list[Path]]:
    """The module names a short `module.name` may start with: not the name of a package too (the
    map says `jobs.enqueue` for a domain's service, `batches.act.ABORT` for an audit action)."""
    packages = {
        p.parent.name for top in ("app", "workers") for p in (ROOT / top).rglob("__init__.py")
    }
    return {stem: paths for stem, paths in modules_by_name().items() if stem not in packages}


def problems(text: str) -> list[str]:
    """What the text names that the code does not have, one line each."""
    wrong: list[str] = []
    for span in (s.strip() for s in CODE.findall(text)):
        if "/" in span and (m := PATH_SPAN.match(span)):
            path = ROOT / m["path"]
            if m["ext"] == "/":
                if not path.is_dir():
                    wrong.append(f"`{span}`: no such folder")
                continue
            module = path.with_suffix(".py")
            name = m["colon"] or m["dotted"]
            if m["ext"] is None and name is None:
                if not (path.exists() or module.is_file()):
                    wrong.append(f"`{span}`: no such path")
            elif not module.is_file():
                wrong.append(f"`{span}`: no module {module.relative_to(ROOT)}")
            elif name is not None and not defines(module, name):
                wrong.append(f"`{span}`: {module.relative_to(ROOT)} defines no `{name}`")
        elif m := DOTTED_SPAN.match(span):
            if not resolve_dotted(m["name"]):
                wrong.append(f"`{span}`: no such module or name")
        elif (m := SHORT_SPAN.match(span)) and m["module"] in short_modules():
            candidates = modules_by_name()[m["module"]]
            if not any(defines(path, m["name"]) for path in candidates):
                where = ", ".join(str(p.relative_to(ROOT)) for p in candidates)
                wrong.append(f"`{span}`: {where} defines no `{m['name']}`")
    for m in ADJACENT.finditer(text):
        if (ROOT / m["path"]).is_file() and not defines(ROOT / m["path"], m["name"]):
            wrong.append(f"`{m['path']}` `{m['name']}`: no `{m['name']}` in {m['path']}")
    return wrong + table_problems(text)


def table_problems(text: str) -> list[str]:
    """The domains table: API folders under app/, worker folders under workers/."""
    wrong: list[str] = []
    columns: dict[int, str] = {}
    for line in text.splitlines():
        if not line.startswith("|"):
            columns = {}
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not columns:
            columns = {
                i: root
                for i, cell in enumerate(cells)
                for root in ("app", "workers")
                if f"(`{root}/`)" in cell
            }
            continue
        for i, root in columns.items():
            for folder in re.findall(r"`([\w/]+/)`", cells[i] if i < len(cells) else ""):
                if not (ROOT / root / folder).is_dir():
                    wrong.append(f"domains table: no folder {root}/{folder}")
    return wrong


def test_the_map_names_only_what_exists() -> None:
    wrong = problems(MAP.read_text())
    assert not wrong, "docs/architecture.md names what the code lacks:\n" + "\n".join(wrong)


def test_the_check_sees_what_it_checks() -> None:
    """Each form is read: a name that exists passes, one that does not is reported."""
    good = (
        "`app/lake/commit.py` `commit`, `app/lake/commit.commit`, `app/lake/commit.py:commit`, "
        "`app.lake.commit.commit`, `workers/runtime.py`, `workers/spark/`, `runtime.settle`, "
        "`tombstones.TombstoneList.materialized_seq`, `app/jobs/reconciler.Reconciler`, "
        "`visible.tombstone_filter(…, gdpr)`, `jobs.enqueue`"
    )
    assert problems(good) == []
    bad = [
        "`app/batches/endpoints.py` `act_on_batch`",
        "`app/lake/commit.no_such_function`",
        "`app/lake/commit.py:no_such_function`",
        "`app.lake.commit.no_such_function`",
        "`workers/ingest/`",
        "`workers/rewrite/task.py`",
        "`runtime.no_such_function`",
        "`tombstones.TombstoneList.no_such_member`",
        "| domain | API (`app/`) | worker (`workers/`) |\n|---|---|---|\n"
        "| x | `datasets/` | `exports/` |",
    ]
    for text in bad:
        assert len(problems(text)) == 1, text
