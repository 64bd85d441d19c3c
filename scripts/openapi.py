"""Write the app's OpenAPI document to clients/openapi.json (run from the repository root:
`.venv/bin/python scripts/openapi.py`; `--check` only says whether the file is up to date)."""

from __future__ import annotations

import sys
from pathlib import Path

from app.main import create_app
from app.openapi import SPEC_PATH, render


def main(argv: list[str]) -> int:
    path = Path(__file__).resolve().parent.parent / SPEC_PATH
    text = render(create_app().openapi())
    if "--check" in argv:
        current = path.read_text() if path.exists() else ""
        if current != text:
            print(f"{SPEC_PATH} is out of date: run .venv/bin/python scripts/openapi.py")
            return 1
        print(f"{SPEC_PATH} is up to date")
        return 0
    path.write_text(text)
    print(f"wrote {SPEC_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
