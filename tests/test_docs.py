"""README.md and docs/*.md point only inside the repository: every markdown link and image
resolves to a file of the checkout (or is a URL of the local service), and every file a page
names (`docs/testing.md`, `tests/fixtures/service.py`, a bare `DESIGN.md`) exists here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(?P<target>\S+)", re.MULTILINE)
AUTOLINK = re.compile(r"<(?P<target>[a-z]+://[^>\s]+)>")
LOCAL_HOSTS = ("127.0.0.1", "localhost")
CODE = re.compile(r"`([^`\n]+)`")
# a repository path as pages name it: known top folders, or a name ending in .md
PATH = re.compile(
    r"^(?:\.{1,2}/)*(?:(?:app|workers|tests|docs|scripts|bench|clients|deploy|migrations)/"
    r"[\w./-]*[\w/]|[\w./-]*\.md)$"
)
PLAIN_MD = re.compile(r"(?<![\w/.`-])(?P<name>[\w-]+(?:/[\w-]+)*\.md)\b")


def links(text: str) -> list[str]:
    """The targets of every link, image, reference definition and autolink of a page."""
    found = [m["target"] for m in LINK.finditer(text)]
    found += [m["target"] for m in REFERENCE.finditer(text)]
    return found + [m["target"] for m in AUTOLINK.finditer(text)]


def named_paths(text: str) -> list[str]:
    """Repository paths a page names in code spans or as bare `*.md` names."""
    found = [span.strip() for span in CODE.findall(text) if PATH.match(span.strip())]
    return found + [m["name"] for m in PLAIN_MD.finditer(CODE.sub("", text))]


def resolves(page: Path, target: str) -> bool:
    """A local target that names a file or folder inside the repository."""
    path = target.split("#", 1)[0]
    if not path:
        return True  # an anchor of the page itself
    for base in (page.parent, ROOT):
        candidate = (base / path).resolve()
        if candidate.is_relative_to(ROOT) and candidate.exists():
            return True
    if "/" not in path:  # a bare name: a file of that name somewhere in the repository
        return any(p for p in ROOT.rglob(path) if ".venv" not in p.parts)
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_stays_in_the_repository(page: Path) -> None:
    broken = []
    for target in links(page.read_text()):
        if "://" in target or target.startswith("mailto:"):
            host = target.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
            if host not in LOCAL_HOSTS:
                broken.append(f"{target}: leaves the repository")
        elif not resolves(page, target):
            broken.append(f"{target}: no such file in the repository")
    assert not broken, broken


def names_a_file(page: Path, name: str) -> bool:
    """A named path that exists; `app/lake/commit.commit` names `app/lake/commit.py`."""
    module = re.sub(r"^(.*/\w+)\.\w+$", r"\1.py", name)
    return resolves(page, name) or (module != name and resolves(page, module))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_page_names_is_in_the_repository(page: Path) -> None:
    missing = [name for name in named_paths(page.read_text()) if not names_a_file(page, name)]
    assert not missing, missing


def test_the_link_checks_see_what_they_check() -> None:
    text = "see [a](../shared/DESIGN.md), ![b](docs/x.png), <https://example.com/x>, `../y.md`"
    assert links(text) == ["../shared/DESIGN.md", "docs/x.png", "https://example.com/x"]
    assert named_paths(text + " and DESIGN.md §2") == ["../y.md", "DESIGN.md"]
    assert not resolves(ROOT / "README.md", "../shared/DESIGN.md")
    assert not resolves(ROOT / "README.md", "DESIGN.md")
    assert resolves(ROOT / "README.md", "docs/testing.md#why-it-fits-in-ci")
    assert names_a_file(ROOT / "README.md", "app/lake/commit.commit")
    assert not names_a_file(ROOT / "README.md", "app/lake/no_such_module.commit")
