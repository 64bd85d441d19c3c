"""No import cycle in app/ or workers/, hidden in a function or not: the module graph (every
import, function-level ones included, read by grimp, import-linter's engine) has no module that
imports itself back. The layering contracts are import-linter's (`lint-imports`, the lint step)."""

from __future__ import annotations

import grimp


def test_no_module_imports_itself_back() -> None:
    graph = grimp.build_graph("app", "workers")
    ours = [m for m in graph.modules if m.startswith(("app.", "workers."))]
    cycles = []
    for module in sorted(ours):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.startswith(("app.", "workers.")):
                back = graph.find_shortest_chain(importer=imported, imported=module)
                if back is not None:
                    cycles.append(" -> ".join((module, *back)))
    assert cycles == []
