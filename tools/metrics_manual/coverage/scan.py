"""Which metric keys a Miles checkout logs, read statically with `ast` (Miles is never imported).

Few keys are string literals: most are built from dict keys. The scan resolves these forms:

- literal  a key in a dict-writing position: `{"perf/x": v}`, `d["perf/x"] = v`
- fstring  the same with holes: `f"eval/{key}-truncated_ratio"` (a pattern)
- dict_add_prefix  `dict_add_prefix(d, "rollout/")` over the keys of `d`: a dict literal, a dict
           built in the same function, or the dict a called function returns (followed a few calls deep)
- loss_function  `train/` + the keys of the dict a `*loss_function` returns last
- timer    `timer("x")`, `@timer` on `def x`, `Timer().start("x")`, `inverse_timer("x")` -> `perf/x_time`
- prefix_argument  a function that prefixes the keys of a dict argument (`f"{name}/{key}"` over it):
           the keys of the dict each caller passes

Only keys whose first segment is a known namespace count. A namespaced string anywhere else is
reported as excluded, by rule: a file path, a log message, a glob, or a key that is only read.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Folders that never hold emitting code: tests, examples and docs (the dashboard's JS is not Python).
SKIPPED_DIRS = frozenset({"tests", "test", "examples", "docs", "node_modules", "__pycache__"})
MAX_FILE_BYTES = 2_000_000  # a generated or hostile file this large is not read
_DEPTH = 6  # calls followed to find a dict's keys

_FILE_SUFFIX = re.compile(r"\.(pt|pth|bin|safetensors|json|jsonl|ya?ml|txt|csv|log|pkl|npy|npz|html|png|parquet)$")


@dataclass(frozen=True)
class Hole:
    """A formatted value inside a key: `{key}`."""

    name: str
    open: bool = False  # a loop variable over keys the scan cannot see (dataset names, loss terms ...)


Part = str | Hole
Template = tuple[Part, ...]


def render(t: Template) -> str:
    return "".join(p if isinstance(p, str) else "{" + p.name + "}" for p in t)


def _join(*templates: Template) -> Template:
    out: list[Part] = []
    for t in templates:
        for p in t:
            if isinstance(p, str) and out and isinstance(out[-1], str):
                out[-1] += p
            elif p != "":
                out.append(p)
    return tuple(out)


@dataclass(frozen=True)
class Emission:
    """One key (or pattern) the code logs, and where its name is built."""

    key: str
    path: str
    line: int
    symbol: str
    form: str
    # A pattern with a hole over keys the scan cannot see (`eval/{key}`): it names its family,
    # but never stands in for one documented key, or a vanished key would still read as logged.
    open: bool = False


@dataclass(frozen=True)
class Excluded:
    """A namespaced string that is not a logged key, and the rule that says so."""

    text: str
    path: str
    line: int
    rule: str  # path | log_message | glob | read


@dataclass
class Scan:
    """What one checkout logs: its emissions, the strings excluded by rule, and its symbols by file."""

    emissions: list[Emission] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    symbols: dict[str, set[str]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    def keys(self) -> dict[str, list[Emission]]:
        out: dict[str, list[Emission]] = {}
        for e in self.emissions:
            out.setdefault(e.key, []).append(e)
        return out


@dataclass
class _Func:
    node: ast.FunctionDef | ast.AsyncFunctionDef | None  # None: module level
    module: _Module
    qualname: str
    params: list[str]
    strings: dict[str, list[ast.expr]] = field(default_factory=dict)  # name -> its assigned values
    dict_sources: dict[str, list[ast.expr]] = field(default_factory=dict)  # name -> dict expressions merged in
    dict_keys: dict[str, list[ast.expr]] = field(default_factory=dict)  # name -> keys written by d[k] = ...
    loops: dict[str, list[ast.expr]] = field(default_factory=dict)  # loop variable -> what it iterates
    returns: list[ast.expr] = field(default_factory=list)
    body: list[ast.AST] = field(default_factory=list)  # the nodes of this function, nested ones excluded


@dataclass
class _Module:
    path: str
    dotted: str
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted name of its module
    funcs: dict[str, _Func] = field(default_factory=dict)  # simple name -> function, for calls (last wins)
    every: list[_Func] = field(default_factory=list)  # every function, methods of the same name included


def python_files(root: Path) -> Iterator[Path]:
    """The .py files under root, skipping tests, examples, docs, hidden folders and symlinks."""
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            p = Path(folder) / name
            if name.endswith(".py") and not p.is_symlink():
                yield p


class _Scanner:
    def __init__(self, namespaces: frozenset[str]) -> None:
        self.namespaces = namespaces
        self.modules: dict[str, _Module] = {}  # dotted -> module
        self.by_name: dict[str, list[_Func]] = {}
        self.scan = Scan()
        self._seen: set[tuple[str, str, int, str]] = set()

    # --- reading ---------------------------------------------------------------------

    def read(self, root: Path) -> None:
        for p in python_files(root):
            rel = p.relative_to(root).as_posix()
            try:
                if p.stat().st_size > MAX_FILE_BYTES:
                    raise ValueError("too large")
                tree = ast.parse(p.read_bytes(), filename=rel)
            except (SyntaxError, ValueError, OSError, RecursionError):
                self.scan.unreadable.append(rel)
                continue
            dotted = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            mod = _Module(rel, dotted, tree)
            self.modules[dotted] = mod
            self._index(mod)

    def _index(self, mod: _Module) -> None:
        names: set[str] = set()
        top = _Func(None, mod, "<module>", [])
        self._collect(top, mod.tree.body)
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:
                    pkg = mod.dotted.split(".")[: -node.level] if not mod.path.endswith("__init__.py") else []
                    base = ".".join([*pkg, node.module])
                for a in node.names:
                    mod.imports[a.asname or a.name] = base
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
        stack: list[tuple[ast.AST, str]] = [(mod.tree, "")]
        while stack:
            parent, prefix = stack.pop()
            for child in ast.iter_child_nodes(parent):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qual = f"{prefix}{child.name}"
                    sig: ast.arguments = child.args
                    params = [x.arg for x in [*sig.posonlyargs, *sig.args, *sig.kwonlyargs]]
                    fn = _Func(child, mod, qual, params)
                    self._collect(fn, child.body)
                    mod.funcs[child.name] = fn
                    mod.every.append(fn)
                    self.by_name.setdefault(child.name, []).append(fn)
                    names.add(child.name)
                    stack.append((child, qual + "."))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}."))
                else:
                    stack.append((child, prefix))
        mod.every.append(top)
        self.scan.symbols[mod.path] = names

    def _collect(self, fn: _Func, body: list[ast.stmt]) -> None:
        """The assignments, dict writes, loops and returns of one function body (nested defs excluded)."""
        todo: list[tuple[ast.AST, bool]] = [(n, False) for n in body]
        while todo:
            node, nested = todo.pop()
            if isinstance(node, ast.ClassDef):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                # A closure writes into this function's dicts (`log_dict[...]` in a helper): read its writes too.
                todo.extend((n, True) for n in ast.iter_child_nodes(node))
                continue
            if not nested:
                fn.body.append(node)
            todo.extend((n, nested) for n in ast.iter_child_nodes(node))
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        fn.strings.setdefault(t.id, []).append(node.value)
                        fn.dict_sources.setdefault(t.id, []).append(node.value)
                    elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        fn.dict_sources.setdefault("self." + t.attr, []).append(node.value)
                    elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                        fn.dict_keys.setdefault(t.value.id, []).append(t.slice)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if isinstance(node.op, ast.BitOr):
                    fn.dict_sources.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "update" and isinstance(node.func.value, ast.Name) and node.args:
                    fn.dict_sources.setdefault(node.func.value.id, []).append(node.args[0])
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                for name in _target_names(node.target):
                    fn.loops.setdefault(name, []).append(node.iter)
            elif isinstance(node, ast.Return) and node.value is not None and not nested:
                fn.returns.append(node.value)

    # --- key templates ---------------------------------------------------------------

    def template(self, e: ast.expr, fn: _Func, depth: int = 0) -> Template | None:
        """The text of a string expression, holes for what is not known."""
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return (e.value,)
        if isinstance(e, ast.JoinedStr):
            parts: list[Template] = []
            for v in e.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    parts.append((v.value,))
                elif isinstance(v, ast.FormattedValue):
                    inner = self.template(v.value, fn, depth + 1) if isinstance(v.value, ast.Name) else None
                    parts.append(inner if inner is not None else (Hole(_hole_name(v.value)),))
            return _join(*parts)
        if isinstance(e, ast.Name) and depth < _DEPTH:
            values = fn.strings.get(e.id, [])
            if len(values) == 1:  # one assignment: a constant name such as `prefix = "rollout/fully_async/"`
                return self.template(values[0], fn, depth + 1)
            return None
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            left, right = self.template(e.left, fn, depth + 1), self.template(e.right, fn, depth + 1)
            return _join(left, right) if left is not None and right is not None else None
        return None

    def key_of(self, e: ast.expr, fn: _Func, depth: int = 0) -> list[Template]:
        """A dict key expression as templates; a hole over a loop variable becomes the keys it iterates."""
        t = self.template(e, fn)
        if t is None:
            if isinstance(e, ast.Name) and e.id in fn.loops:
                t = (Hole(e.id),)
            else:
                return []
        return self.expand_loops(t, fn, depth)

    def expand_loops(self, t: Template, fn: _Func, depth: int, done: frozenset[str] = frozenset()) -> list[Template]:
        if depth > _DEPTH:
            return [t]
        for i, p in enumerate(t):
            if isinstance(p, Hole) and p.name in fn.loops and p.name not in done:
                keys = []
                for it in fn.loops[p.name]:
                    d = _iterated_dict(it)
                    keys += self.keys_of(d, fn, depth + 1) if d is not None else []
                keys = [k for k in keys if not any(isinstance(x, Hole) and x.name == p.name for x in k)]
                if not keys:  # `d[key] = ...` over d itself, or over data: the keys are not in the code
                    keys = [(Hole(p.name, open=True),)]
                out: list[Template] = []
                for k in keys:
                    out += self.expand_loops(_join(t[:i], k, t[i + 1 :]), fn, depth + 1, done | {p.name})
                return out
        return [t]

    def keys_of(self, e: ast.expr, fn: _Func, depth: int = 0, seen: frozenset[str] = frozenset()) -> list[Template]:
        """The keys of a dict expression, as far as the code shows them."""
        if depth > _DEPTH:
            return []
        out: list[Template] = []
        if isinstance(e, ast.Dict):
            for k, v in zip(e.keys, e.values, strict=True):
                out += self.keys_of(v, fn, depth + 1, seen) if k is None else self.key_of(k, fn, depth)
        elif isinstance(e, ast.DictComp):
            out += self.key_of(e.key, fn, depth)
        elif isinstance(e, ast.Name) or _is_self_attr(e):
            name = e.id if isinstance(e, ast.Name) else "self." + e.attr  # type: ignore[attr-defined]
            if name in seen:
                return []
            for src in fn.dict_sources.get(name, []):
                out += self.keys_of(src, fn, depth + 1, seen | {name})
            for k in fn.dict_keys.get(name, []):
                out += self.key_of(k, fn, depth)
        elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr):
            out += self.keys_of(e.left, fn, depth + 1, seen) + self.keys_of(e.right, fn, depth + 1, seen)
        elif isinstance(e, ast.BoolOp):
            for v in e.values:
                out += self.keys_of(v, fn, depth + 1, seen)
        elif isinstance(e, ast.IfExp):
            out += self.keys_of(e.body, fn, depth + 1, seen) + self.keys_of(e.orelse, fn, depth + 1, seen)
        elif isinstance(e, ast.Call):
            if _call_name(e) == "dict_add_prefix" and len(e.args) == 2:
                prefix = self.template(e.args[1], fn)
                if prefix is not None:
                    out += [_join(prefix, k) for k in self.keys_of(e.args[0], fn, depth + 1, seen)]
            elif _call_name(e) == "dict":
                out += [(kw.arg,) for kw in e.keywords if kw.arg]
                for a in e.args:
                    out += self.keys_of(a, fn, depth + 1, seen)
            else:
                for callee in self.resolve(e, fn):
                    for r in callee.returns:
                        if isinstance(r, ast.Tuple):
                            continue  # a tuple is not a dict (loss functions are read on their own)
                        out += self.keys_of(r, callee, depth + 1)
        return out

    def resolve(self, call: ast.Call, fn: _Func) -> list[_Func]:
        """The function a call reaches: same module, an imported name, or the only function of that name."""
        name = _call_name(call)
        if not name:
            return []
        if isinstance(call.func, ast.Name):
            if name in fn.module.funcs:
                return [fn.module.funcs[name]]
            src = self.modules.get(fn.module.imports.get(name, ""))
            if src and name in src.funcs:
                return [src.funcs[name]]
        found = self.by_name.get(name, [])
        return found if len(found) == 1 else []

    # --- emissions -------------------------------------------------------------------

    def namespaced(self, t: Template) -> bool:
        head = t[0] if t and isinstance(t[0], str) else ""
        ns, sep, rest = head.partition("/")
        return bool(sep) and ns in self.namespaces and (bool(rest) or len(t) > 1)

    def emit(self, t: Template, fn: _Func, line: int, form: str) -> None:
        if not self.namespaced(t):
            return
        if len(t) > 2 and t[0].endswith("/") and all(isinstance(p, Hole) for p in t[1:]):  # type: ignore[union-attr]
            return  # `train/{role_tag}{key}`: a builder; its keys are found where they are made
        key = render(t)
        rule = exclusion(key)
        if rule:
            self._exclude(key, fn, line, rule)
            return
        mark = (key, fn.module.path, line, form)
        if mark not in self._seen:
            self._seen.add(mark)
            is_open = any(isinstance(p, Hole) and p.open for p in t)
            self.scan.emissions.append(Emission(key, fn.module.path, line, fn.qualname, form, is_open))

    def _exclude(self, text: str, fn: _Func, line: int, rule: str) -> None:
        self.scan.excluded.append(Excluded(text, fn.module.path, line, rule))

    def run(self) -> Scan:
        funcs = [f for m in self.modules.values() for f in m.every]
        prefixers = {f.qualname.rsplit(".", 1)[-1]: f for f in funcs if f.node is not None and self._prefix_slots(f)}
        for fn in funcs:
            written: set[int] = set()
            for node in fn.body:
                self._write_positions(node, fn, written)
                if isinstance(node, ast.Call):
                    self._call(node, fn, prefixers)
            self._strings(fn, written)
            if fn.node is not None:
                self._function(fn)
        self.scan.emissions.sort(key=lambda e: (e.key, e.path, e.line))
        self.scan.excluded.sort(key=lambda e: (e.path, e.line, e.text))
        return self.scan

    def _write_positions(self, node: ast.AST, fn: _Func, written: set[int]) -> None:
        keys: list[ast.expr] = []
        if isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.DictComp):
            keys = [node.key]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            keys = [node.slice]
        for k in keys:
            written.add(id(k))
            form = "fstring" if isinstance(k, ast.JoinedStr) else "literal"
            for t in self.key_of(k, fn):
                self.emit(t, fn, k.lineno, form)

    def _call(self, call: ast.Call, fn: _Func, prefixers: dict[str, _Func]) -> None:
        name = _call_name(call)
        if name == "dict_add_prefix" and len(call.args) == 2:
            prefix = self.template(call.args[1], fn)
            if prefix is not None and self.namespaced(prefix + ("x",)):
                for k in self.keys_of(call.args[0], fn):
                    self.emit(_join(prefix, k), fn, call.lineno, "dict_add_prefix")
        elif name in ("timer", "inverse_timer") and len(call.args) == 1 or _is_timer_start(call):
            t = self.template(call.args[0], fn) if call.args else None
            if t is not None:
                self.emit(_join(("perf/",), t, ("_time",)), fn, call.lineno, "timer")
        elif name in prefixers:
            self._prefixed_call(call, fn, prefixers[name])

    def _prefix_slots(self, f: _Func) -> list[tuple[Template, ast.AST]]:
        """Key templates in `f` that start with a parameter or whose holes iterate a parameter's keys."""
        slots: list[tuple[Template, ast.AST]] = []
        for node in f.body:
            if isinstance(node, ast.DictComp) or isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                k = node.key if isinstance(node, ast.DictComp) else node.slice
                t = self.template(k, f)
                if t is None or not any(isinstance(p, Hole) for p in t):
                    continue
                holes = {p.name for p in t if isinstance(p, Hole)}
                loop_params = {h for h in holes for it in f.loops.get(h, []) if _iterated_name(it) in f.params}
                starts_with_param = isinstance(t[0], Hole) and t[0].name in f.params
                if loop_params or starts_with_param:
                    slots.append((t, node))
        return slots

    def _prefixed_call(self, call: ast.Call, caller: _Func, callee: _Func) -> None:
        bound = _bind(call, callee.params)
        for t, _ in self._prefix_slots(callee):
            parts: list[Template] = [()]
            for p in t:
                if isinstance(p, Hole) and p.name in bound and self.template(bound[p.name], caller) is not None:
                    sub = self.template(bound[p.name], caller)
                    assert sub is not None
                    parts = [_join(x, sub) for x in parts]
                elif isinstance(p, Hole) and p.name in callee.loops:
                    srcs = [_iterated_name(it) for it in callee.loops[p.name]]
                    args = [bound[s] for s in srcs if s in bound]
                    if not args and not any(s in callee.params for s in srcs):
                        # iterates a local built from the arguments: the dicts the caller passes
                        args = [a for a in [*call.args, *(kw.value for kw in call.keywords)] if isinstance(a, ast.Name)]
                    keys = [k for a in args for k in self.keys_of(a, caller)]
                    if not keys:
                        return
                    parts = [_join(x, k) for x in parts for k in keys]
                else:
                    parts = [_join(x, (p,)) for x in parts]
            for whole in parts:
                self.emit(whole, caller, call.lineno, "prefix_argument")

    def _function(self, fn: _Func) -> None:
        node = fn.node
        assert node is not None
        for d in node.decorator_list:
            if isinstance(d, ast.Name) and d.id == "timer" or isinstance(d, ast.Attribute) and d.attr == "timer":
                self.emit(("perf/", node.name, "_time"), fn, d.lineno, "timer")
            for call in (n for n in ast.walk(d) if isinstance(n, ast.Call)):  # `@with_defer(lambda: Timer().start(..))`
                if _is_timer_start(call) or _call_name(call) in ("timer", "inverse_timer") and len(call.args) == 1:
                    t = self.template(call.args[0], fn)
                    if t is not None:
                        self.emit(_join(("perf/",), t, ("_time",)), fn, call.lineno, "timer")
        if node.name.endswith("loss_function"):
            for r in fn.returns:  # `return loss, metrics`
                if isinstance(r, ast.Tuple) and len(r.elts) == 2:
                    for k in self.keys_of(r.elts[-1], fn):
                        self.emit(_join(("train/",), k), fn, r.lineno, "loss_function")

    def _strings(self, fn: _Func, written: set[int]) -> None:
        """Namespaced strings outside key positions: excluded, with the rule that excludes them."""
        in_log: set[int] = set()
        # The constant parts of an f-string are reported with the f-string, not on their own.
        in_fstring = {id(v) for n in fn.body if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in fn.body:
            if isinstance(node, ast.Call) and _is_log_call(node):
                in_log.update(id(n) for a in node.args for n in ast.walk(a))
            if isinstance(node, ast.Call) and _call_name(node) in ("dict_add_prefix", "timer", "inverse_timer"):
                written.update(id(n) for a in node.args for n in ast.walk(a))
        for node in fn.body:
            if id(node) in written or not isinstance(node, (ast.Constant, ast.JoinedStr)):
                continue
            if isinstance(node, ast.Constant) and not isinstance(node.value, str):
                continue
            t = self.template(node, fn)
            if t is None or not self.namespaced(t) or id(node) in in_fstring:
                continue
            text = render(t)
            rule = exclusion(text) or ("log_message" if id(node) in in_log else "read")
            self._exclude(text, fn, node.lineno, rule)


def exclusion(key: str) -> str | None:
    """The rule by which a namespaced string is not a key: a file path, a log message, a glob."""
    if _FILE_SUFFIX.search(key):
        return "path"
    if any(c.isspace() for c in key) or ": " in key:
        return "log_message"
    if "*" in key:
        return "glob"
    return None


def _target_names(t: ast.expr) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name):
        return [t.elts[0].id]  # `for key, value in d.items()`: the key
    return []


def _iterated_dict(it: ast.expr) -> ast.expr | None:
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "keys"):
        return it.func.value
    return it if isinstance(it, (ast.Name, ast.Dict)) else None


def _iterated_name(it: ast.expr | None) -> str | None:
    d = _iterated_dict(it) if it is not None else None
    return d.id if isinstance(d, ast.Name) else None


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _is_self_attr(e: ast.expr) -> bool:
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"


def _is_timer_start(call: ast.Call) -> bool:
    f = call.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "start"
        and isinstance(f.value, ast.Call)
        and _call_name(f.value) == "Timer"
        and len(call.args) == 1
    )


_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


def _is_log_call(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in ("print", "log_structured")
    if isinstance(f, ast.Attribute) and f.attr in _LOG_METHODS:
        base = f.value
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        return "log" in name.lower() or name == "warnings"
    return False


def _hole_name(e: ast.expr) -> str:
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return e.attr
    return "value"


def _bind(call: ast.Call, params: list[str]) -> dict[str, ast.expr]:
    ps = params[1:] if params[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute) else params
    bound = {p: a for p, a in zip(ps, call.args, strict=False) if not isinstance(a, ast.Starred)}
    bound.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
    return bound


def scan(root: Path, namespaces: frozenset[str]) -> Scan:
    """Every key the Python code under `root` logs under one of `namespaces`."""
    s = _Scanner(namespaces)
    s.read(root)
    return s.run()
