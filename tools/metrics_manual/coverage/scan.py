"""Which metric keys a Miles checkout logs, read statically with `ast` (Miles is never imported).

Few keys are string literals: most are built from dict keys. The scan resolves these forms:

- literal  a key in a dict-writing position: `{"perf/x": v}`, `d["perf/x"] = v`
- fstring  the same with holes: `f"eval/{key}-truncated_ratio"` (a pattern)
- dict_add_prefix  `dict_add_prefix(d, "rollout/")` over the keys of `d`: a dict literal, a dict
           built in the same function, or the dict a called function returns (followed a few calls deep)
- loss_function  `train/{role_tag}` + the keys of the dict a `*loss_function` returns last (see roles below)
- timer    `timer("x")`, `@timer` on `def x`, `Timer().start("x")`, `inverse_timer("x")` -> `perf/x_time`,
           logged only if a process that flushes its timers runs it (processes.py: else "timed, never logged")
- prefix_argument  a function that prefixes the keys of a dict argument (`f"{name}/{key}"` over it):
           the keys of the dict each caller passes

How holes are filled:

- a loop variable: the keys of what it iterates (a dict, a list of strings, the dict a call returns,
  `a, d = f()`: the dict at that place of the tuple f returns; `f` may be a local bound to named functions);
- a parameter: the strings every caller passes (or its default), when all of them are known
  (`compute_log_prob(..., store_prefix="ref_")` -> `perf/ref_log_probs_time`); else the hole stays open;
- a typed batch: a loop over a parameter annotated with a dict alias of the checkout
  (`log_rollout_data(rollout_data: RolloutBatch)`) iterates every key written into a dict of that
  name anywhere (`rollout_data["advantages"] = ...` in the trainer, `rollout_data[key] = ...` over a list
  of keys in the rollout manager's shards: Miles hands the batch on under that one name), plus the keys
  the loop names (`if key in [...]:`), minus those it skips (`if key in [...]: continue`) and those
  popped (`rollout_data.pop("partition")`);
- a role tag: a local computed from `role` alone (`role_tag = "" if role == "actor" else f"{role}-"`)
  takes one value per role of the process model (`Literal["actor", "critic"]`), or the role a call
  passes as a constant. A loss function's keys get the tag of the roles that run it: a loss type assigned in
  code (`args.loss_type = "value_loss"`, run by the critic) selects through the dispatch (`case "value_loss":
  return value_loss_function`) the loss function of the roles whose processes run the assignment; the other
  loss functions run in the roles that assign none.

An open hole names a family, never one key. Only keys whose first segment is a known namespace count.
A namespaced string anywhere else is reported as excluded, by rule: a file path, a log message, a glob,
or a key that is only read.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metrics_manual.coverage.processes import (
    ProcessModel,
    Site,
    absolute_module,
    is_timer_call,
    process_model,
    timer_sites,
)
from metrics_manual.coverage.pyfile import read

# Folders that never hold emitting code: tests, examples and docs (the dashboard's JS is not Python).
SKIPPED_DIRS = frozenset({"tests", "test", "examples", "docs", "node_modules", "__pycache__"})
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
    # A timer that no process flushing its timers runs (processes.py): timed, never logged.
    logged: bool = True
    runs_in: tuple[str, ...] = ()  # for a timer: the processes that run it


@dataclass(frozen=True)
class Excluded:
    """A namespaced string that is not a logged key, and the rule that says so."""

    text: str
    path: str
    line: int
    rule: str  # path | log_message | glob | read


@dataclass(frozen=True)
class Unread:
    """A Python file the scan did not read, and why: the keys it logs are not seen."""

    path: str
    line: int
    col: int
    why: str


@dataclass
class Scan:
    """What one checkout logs: its emissions, the strings excluded by rule, and the files it could not read."""

    emissions: list[Emission] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    unreadable: list[Unread] = field(default_factory=list)
    processes: ProcessModel = field(default_factory=ProcessModel)

    def keys(self) -> dict[str, list[Emission]]:
        """Every key a process logs (timers never flushed left out), with where it is built."""
        out: dict[str, list[Emission]] = {}
        for e in self.emissions:
            if e.logged:
                out.setdefault(e.key, []).append(e)
        return out

    def timed_not_logged(self) -> dict[str, list[Emission]]:
        """Timer keys that only processes which never flush their timers run, and no other form logs."""
        logged = self.keys()
        out: dict[str, list[Emission]] = {}
        for e in self.emissions:
            if not e.logged and e.key not in logged:
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
    loop_bodies: dict[int, list[ast.stmt]] = field(default_factory=dict)  # id(what a `for` iterates) -> its body
    defaults: dict[str, ast.expr] = field(default_factory=dict)  # parameter -> its default
    annotations: dict[str, ast.expr] = field(default_factory=dict)  # parameter -> its annotation
    pops: dict[str, list[ast.expr]] = field(default_factory=dict)  # name -> keys removed by d.pop(k)
    returns: list[ast.expr] = field(default_factory=list)
    body: list[ast.AST] = field(default_factory=list)  # the nodes of this function, nested ones excluded


@dataclass
class _Module:
    path: str
    dotted: str
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted name of its module
    funcs: dict[str, _Func] = field(default_factory=dict)  # simple name -> function, for calls (last wins)
    top: dict[str, _Func] = field(default_factory=dict)  # module-level functions
    every: list[_Func] = field(default_factory=list)  # every function, methods of the same name included


def python_files(root: Path) -> Iterator[Path]:
    """The .py names under root, skipping tests, examples, docs and hidden folders (a link to a folder is not
    followed; a .py that is a link, or no regular file, is named too: the scan reports it as not read)."""
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder) / name


class _Scanner:
    def __init__(self, namespaces: frozenset[str]) -> None:
        self.namespaces = namespaces
        self.modules: dict[str, _Module] = {}  # dotted -> module
        self.by_name: dict[str, list[_Func]] = {}
        self.scan = Scan()
        self._seen: set[tuple[str, str, int, str]] = set()
        self.funcs: list[_Func] = []
        self.processes = ProcessModel()
        self.calls: dict[str, list[tuple[ast.Call, _Func]]] = {}  # callee name -> calls and their callers
        self.role_tags: dict[str, dict[str, str]] = {}  # local computed from the role -> its value per role
        self.loss_builder: tuple[str, str | None] = ("train/", None)  # `f"train/{role_tag}{key}"`
        self.selected_by: dict[str, set[str]] = {}  # loss function -> the loss types that select it
        self.dict_aliases: set[str] = set()  # `RolloutBatch = dict[...]`
        self._batches: dict[str, list[Template]] = {}
        self.slots: set[int] = set()  # the key positions of functions that prefix a dict argument's keys

    # --- reading ---------------------------------------------------------------------

    def read(self, root: Path) -> None:
        for p in python_files(root):
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():  # the file it names is read where it stands, when the scan reads that place
                self.scan.unreadable.append(Unread(rel, 1, 1, "a symbolic link; the scan does not follow links"))
                continue
            got = read(root, rel)
            if got.tree is None:
                self.scan.unreadable.append(Unread(rel, got.line, got.col, got.why))
                continue
            tree = got.tree
            dotted = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            mod = _Module(rel, dotted, tree)
            self.modules[dotted] = mod
            self._index(mod)

    def _index(self, mod: _Module) -> None:
        top = _Func(None, mod, "<module>", [])
        self._collect(top, mod.tree.body)
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                base = absolute_module(mod.dotted, mod.path, node)
                for a in node.names:
                    mod.imports[a.asname or a.name] = base
        stack: list[tuple[ast.AST, str]] = [(mod.tree, "")]
        while stack:
            parent, prefix = stack.pop()
            for child in ast.iter_child_nodes(parent):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qual = f"{prefix}{child.name}"
                    sig: ast.arguments = child.args
                    params = [x.arg for x in [*sig.posonlyargs, *sig.args, *sig.kwonlyargs]]
                    fn = _Func(child, mod, qual, params)
                    positional = [*sig.posonlyargs, *sig.args]
                    fn.defaults = {a.arg: d for a, d in zip(positional[::-1], sig.defaults[::-1], strict=False)}
                    fn.defaults |= {a.arg: d for a, d in zip(sig.kwonlyargs, sig.kw_defaults, strict=True) if d}
                    fn.annotations = {a.arg: a.annotation for a in [*positional, *sig.kwonlyargs] if a.annotation}
                    self._collect(fn, child.body)
                    mod.funcs[child.name] = fn
                    if not prefix:
                        mod.top[child.name] = fn
                    mod.every.append(fn)
                    self.by_name.setdefault(child.name, []).append(fn)
                    stack.append((child, qual + "."))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}."))
                else:
                    stack.append((child, prefix))
        mod.every.append(top)

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
                    elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Call):
                        # `loss, metrics = f(...)`: the element of what f returns at the same place
                        for i, elt in enumerate(t.elts):
                            if isinstance(elt, ast.Name):
                                part = ast.Subscript(value=node.value, slice=ast.Constant(i), ctx=ast.Load())
                                fn.dict_sources.setdefault(elt.id, []).append(part)
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
                if node.func.attr == "pop" and isinstance(node.func.value, ast.Name) and node.args:
                    fn.pops.setdefault(node.func.value.id, []).append(node.args[0])
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                for name in _target_names(node.target):
                    fn.loops.setdefault(name, []).append(node.iter)
                if isinstance(node, (ast.For, ast.AsyncFor)):
                    fn.loop_bodies[id(node.iter)] = node.body
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
            if isinstance(e, ast.Name) and (e.id in fn.loops or e.id in fn.params):
                t = (Hole(e.id),)
            else:
                return []
        return self.expand(t, fn, depth)

    def expand(self, t: Template, fn: _Func, depth: int, done: frozenset[str] = frozenset()) -> list[Template]:
        """Holes filled as the code shows: a loop variable by what it iterates, a parameter by what callers pass.

        A parameter whose values the callers do not show stays an open hole: it names a family, no key.
        """
        if depth > _DEPTH:
            return [t]
        for i, p in enumerate(t):
            if not isinstance(p, Hole) or p.open or p.name in done:
                continue
            if p.name in fn.loops:
                keys = self._loop_keys(p.name, fn, depth)
            elif p.name in fn.params:
                keys = self.param_values(fn, p.name, depth) or [(Hole(p.name, open=True),)]
            else:
                continue
            out: list[Template] = []
            for k in keys:
                out += self.expand(_join(t[:i], k, t[i + 1 :]), fn, depth + 1, done | {p.name})
            return _unique(out)
        return [t]

    def _loop_keys(self, var: str, fn: _Func, depth: int) -> list[Template]:
        keys: list[Template] = []
        for it in fn.loops[var]:
            if isinstance(it, (ast.List, ast.Tuple, ast.Set)):  # `for key in ["a", "b"]: d[key] = ...`
                keys += [(x.value,) for x in it.elts if isinstance(x, ast.Constant) and isinstance(x.value, str)]
                continue
            d = _iterated_dict(it)
            if isinstance(d, ast.Name) and self._is_batch(fn, d.id):
                skipped, named = _loop_tests(fn.loop_bodies.get(id(it), []), var)
                batch = [*self.batch_keys(d.id), *((k,) for k in sorted(named))]
                keys += [k for k in batch if render(k) not in skipped]
            elif d is not None:
                keys += self.keys_of(d, fn, depth + 1)
        keys = [k for k in keys if not any(isinstance(x, Hole) and x.name == var for x in k)]
        # `d[key] = ...` over d itself, or over data: the keys are not in the code
        return _unique(keys) or [(Hole(var, open=True),)]

    def param_values(self, fn: _Func, name: str, depth: int) -> list[Template] | None:
        """The strings every caller passes for a parameter (or its default); None when one caller's is not known."""
        sites = self.calls_to(fn)
        if not sites or depth > _DEPTH:
            return None
        out: list[Template] = []
        for call, caller in sites:
            bound = _bind(call, fn.params)
            if name in bound:
                arg = bound[name]
                t = self.template(arg, caller)
                if t is None and isinstance(arg, ast.Name) and arg.id in caller.params:
                    t = (Hole(arg.id),)
                values = self.expand(t, caller, depth + 1) if t is not None else []
            elif name in fn.defaults:
                t = self.template(fn.defaults[name], fn)
                values = [t] if t is not None else []
            else:
                return None
            if not values or any(isinstance(x, Hole) for v in values for x in v):
                return None
            out += values
        return _unique(out)

    def calls_to(self, fn: _Func) -> list[tuple[ast.Call, _Func]]:
        """The calls that reach a function: by name (resolved), `self.f(...)` in its class, or its name alone."""
        name = fn.qualname.rsplit(".", 1)[-1]
        cls = fn.qualname.rpartition(".")[0]
        out: list[tuple[ast.Call, _Func]] = []
        for call, caller in self.calls.get(name, []):
            f = call.func
            if isinstance(f, ast.Name):
                ok = fn in self.resolve(call, caller)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
                ok = caller.module is fn.module and caller.qualname.rpartition(".")[0] == cls
            else:
                ok = len(self.by_name.get(name, [])) == 1
            if ok:
                out.append((call, caller))
        return out

    # --- the rollout batch -----------------------------------------------------------

    def _is_batch(self, fn: _Func, name: str) -> bool:
        """A parameter annotated with a dict type the checkout names (`rollout_data: RolloutBatch`)."""
        a = fn.annotations.get(name) if name in fn.params else None
        alias = a.id if isinstance(a, ast.Name) else a.attr if isinstance(a, ast.Attribute) else None
        return alias is not None and alias in self.dict_aliases

    def batch_keys(self, name: str) -> list[Template]:
        """The keys of a typed batch: every key written into a dict of that name anywhere, minus those popped."""
        if name in self._batches:
            return self._batches[name]
        self._batches[name] = []  # a batch built from itself stops here
        keys: list[Template] = []
        popped: set[str] = set()
        ref = ast.Name(id=name, ctx=ast.Load())
        for f in self.funcs:
            if name in f.dict_sources or name in f.dict_keys:
                keys += self.keys_of(ref, f)
            popped |= {
                k.value for k in f.pops.get(name, []) if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
        found = [k for k in _unique(keys) if not _is_open(k) and render(k) not in popped]
        self._batches[name] = found
        return found

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
        elif isinstance(e, ast.Subscript) and isinstance(e.value, ast.Call) and isinstance(e.slice, ast.Constant):
            place = e.slice.value  # `a, metrics = f(...)`: the dict f returns at that place of its tuple
            for callee in self.resolve(e.value, fn) if isinstance(place, int) else []:
                for r in callee.returns:
                    if isinstance(r, ast.Tuple) and isinstance(place, int) and len(r.elts) > place:
                        out += self.keys_of(r.elts[place], callee, depth + 1)
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
        """The functions a call reaches: of the module, imported, named by a local (`f = g; f()`), or the only one."""
        name = _call_name(call)
        if not name:
            return []
        if isinstance(call.func, ast.Name):
            bound = [v.id for v in fn.strings.get(name, []) if isinstance(v, ast.Name)]
            out = [f for n in bound or [name] for f in self._named(n, fn.module)]
            if out:
                return out
        found = self.by_name.get(name, [])
        return found if len(found) == 1 else []

    def _named(self, name: str, mod: _Module) -> list[_Func]:
        for m in (mod, self.modules.get(mod.imports.get(name, ""))):
            if m is not None and name in m.top:
                return [m.top[name]]
            if m is not None and name in m.funcs:
                return [m.funcs[name]]
        return []

    # --- emissions -------------------------------------------------------------------

    def namespaced(self, t: Template) -> bool:
        head = t[0] if t and isinstance(t[0], str) else ""
        ns, sep, rest = head.partition("/")
        return bool(sep) and ns in self.namespaces and (bool(rest) or len(t) > 1)

    def emit(
        self, t: Template, fn: _Func, line: int, form: str, site: Site | None = None, roles: list[str] | None = None
    ) -> None:
        """Record a key; `site`: the timer that measures it (logged only if a flushing process runs it);
        `roles`: the roles whose tag fills a role-tag hole (all when None)."""
        if not self.namespaced(t):
            return
        if len(t) > 2 and t[0].endswith("/") and all(isinstance(p, Hole) for p in t[1:]):  # type: ignore[union-attr]
            return  # `train/{role_tag}{key}`: a builder; its keys are found where they are made
        for whole in self._roles_filled(t, roles):
            key = render(whole)
            rule = exclusion(key)
            if rule:
                self._exclude(key, fn, line, rule)
                continue
            mark = (key, fn.module.path, line, form)
            if mark in self._seen:
                continue
            self._seen.add(mark)
            is_open = any(isinstance(p, Hole) and p.open for p in whole)
            runs_in = tuple(self.processes.runs.get(site, ())) if site else ()
            logged = site is None or self.processes.logged(site)
            self.scan.emissions.append(Emission(key, fn.module.path, line, fn.qualname, form, is_open, logged, runs_in))

    def _roles_filled(self, t: Template, roles: list[str] | None) -> list[Template]:
        """A hole over the role tag (`role_tag = "" if role == "actor" else f"{role}-"`): one key per role."""
        for i, p in enumerate(t):
            if isinstance(p, Hole) and p.name in self.role_tags:
                tags = self.role_tags[p.name]
                chosen = [r for r in roles or [] if r in tags] or list(tags)
                values = dict.fromkeys(tags[r] for r in chosen)
                return [x for v in values for x in self._roles_filled(_join(t[:i], (v,), t[i + 1 :]), roles)]
        return [t]

    def _exclude(self, text: str, fn: _Func, line: int, rule: str) -> None:
        self.scan.excluded.append(Excluded(text, fn.module.path, line, rule))

    def run(self) -> Scan:
        self.funcs = [f for m in self.modules.values() for f in m.every]
        self.processes = process_model((m.path, m.dotted, m.tree) for m in self.modules.values())
        self.scan.processes = self.processes
        for fn in self.funcs:
            for node in fn.body:
                if isinstance(node, ast.Call) and (name := _call_name(node)):
                    self.calls.setdefault(name, []).append((node, fn))
                elif isinstance(node, ast.Match):
                    self._dispatch(node)
            for var, values in fn.strings.items():
                tags = self._role_tag(fn, values)
                if tags:
                    self.role_tags.setdefault(var, {}).update(tags)
        self.dict_aliases = {
            t.id
            for m in self.modules.values()
            for node in m.tree.body
            if isinstance(node, ast.Assign) and _is_dict_type(node.value)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        self.loss_builder = next(self._role_builders(), self.loss_builder)
        prefixers = {
            f.qualname.rsplit(".", 1)[-1]: f for f in self.funcs if f.node is not None and self._prefix_slots(f)
        }
        # `f"{metric_name}/{key}"`: the namespace is the caller's; those keys are read at each caller
        self.slots = {id(n) for f in prefixers.values() for t, n in self._prefix_slots(f) if isinstance(t[0], Hole)}
        for fn in self.funcs:
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

    def _dispatch(self, match: ast.Match) -> None:
        """`case "value_loss": return value_loss_function`: the loss type that selects a loss function."""
        for case in match.cases:
            p = case.pattern
            if isinstance(p, ast.MatchValue) and isinstance(p.value, ast.Constant) and isinstance(p.value.value, str):
                for stmt in case.body:
                    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name):
                        self.selected_by.setdefault(stmt.value.id, set()).add(p.value.value)

    def _role_tag(self, fn: _Func, values: list[ast.expr]) -> dict[str, str]:
        """A local chosen by the role (`role_tag = "" if role == "actor" else f"{role}-"`), for each role."""
        test = values[0].test if len(values) == 1 and isinstance(values[0], ast.IfExp) else None
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "role"):
            return {}
        default = fn.defaults.get("role")
        roles = self.processes.roles or (
            [default.value] if isinstance(default, ast.Constant) and isinstance(default.value, str) else []
        )
        tags = {r: _evaluate(values[0], {"role": r}) for r in roles}
        return {r: v for r, v in tags.items() if v is not None} if all(v is not None for v in tags.values()) else {}

    def _role_builders(self) -> Iterator[tuple[str, str]]:
        """Keys built as `f"train/{role_tag}{key}"` over a dict: the prefix and the role tag's variable."""
        for fn in self.funcs:
            for node in fn.body:
                k = (
                    node.key
                    if isinstance(node, ast.DictComp)
                    else node.slice
                    if isinstance(node, ast.Subscript)
                    else None
                )
                if isinstance(node, ast.Subscript) and not _is_store(node):
                    continue
                t = self.template(k, fn) if isinstance(k, ast.expr) else None
                if t and len(t) == 3 and isinstance(t[0], str) and t[0].endswith("/"):
                    tag, key = t[1], t[2]
                    if isinstance(tag, Hole) and tag.name in self.role_tags and isinstance(key, Hole):
                        yield t[0], tag.name

    def _loss_prefixes(self, fn: _Func) -> list[str]:
        """`train/` and the role tag of each role that runs this loss function.

        A loss type assigned in code (`args.loss_type = "value_loss"`, in the critic's `train_critic`) selects,
        through the dispatch (`case "value_loss": return value_loss_function`), the loss function of the roles
        whose processes run that assignment; every other loss function runs in the roles that assign none.
        """
        assert fn.node is not None
        head, var = self.loss_builder
        tags = self.role_tags.get(var, {}) if var else {}
        assigned = self.processes.loss_types
        selected = self.selected_by.get(fn.node.name, set())
        roles = [r for r, types in assigned.items() if types & selected]
        if not roles:
            roles = [r for r in self.processes.roles if not assigned.get(r)]
        return list(dict.fromkeys(head + tags.get(r, "") for r in roles)) or [head]

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
            if id(node) in self.slots:
                continue
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
        elif is_timer_call(call):
            self._timer(call, fn)
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
        role = bound.get("role")  # `log_train_step(..., role="actor")`: that role's tag only
        roles = [role.value] if isinstance(role, ast.Constant) and isinstance(role.value, str) else None
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
                    parts = [_join(x, k) for x in parts for k in keys]
                else:
                    parts = [_join(x, (p,)) for x in parts]
            for whole in parts:
                self.emit(whole, caller, call.lineno, "prefix_argument", roles=roles)

    def _function(self, fn: _Func) -> None:
        node = fn.node
        assert node is not None
        for line, call in timer_sites(fn.module.path, node):  # `@timer`, `@with_defer(lambda: Timer().start(..))`
            if call is None:
                self.emit(("perf/", node.name, "_time"), fn, line, "timer", (fn.module.path, line))
            else:
                self._timer(call, fn)
        if node.name.endswith("loss_function"):
            prefixes = self._loss_prefixes(fn)
            for r in fn.returns:  # `return loss, metrics`
                if isinstance(r, ast.Tuple) and len(r.elts) == 2:
                    for k in self.keys_of(r.elts[-1], fn):
                        for prefix in prefixes:
                            self.emit(_join((prefix,), k), fn, r.lineno, "loss_function")

    def _timer(self, call: ast.Call, fn: _Func) -> None:
        t = self.template(call.args[0], fn)
        if t is None and isinstance(call.args[0], ast.Name) and call.args[0].id in fn.params:
            t = (Hole(call.args[0].id),)
        for name in self.expand(t, fn, 0) if t is not None else []:
            self.emit(_join(("perf/",), name, ("_time",)), fn, call.lineno, "timer", (fn.module.path, call.lineno))

    def _strings(self, fn: _Func, written: set[int]) -> None:
        """Namespaced strings outside key positions: excluded, with the rule that excludes them."""
        in_log: set[int] = set()
        # The constant parts of an f-string are reported with the f-string, not on their own.
        in_fstring = {id(v) for n in fn.body if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in fn.body:
            if isinstance(node, ast.Call) and _is_log_call(node):
                in_log.update(id(n) for a in node.args for n in ast.walk(a))
            if isinstance(node, ast.Call) and (_call_name(node) == "dict_add_prefix" or is_timer_call(node)):
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


def _unique(templates: list[Template]) -> list[Template]:
    return list(dict.fromkeys(templates))


def _is_open(t: Template) -> bool:
    return any(isinstance(p, Hole) and p.open for p in t)


def _is_store(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)


def _is_dict_type(e: ast.expr) -> bool:
    """`dict[str, ...]` or `Dict[str, ...]`: the value of a type alias such as `RolloutBatch`."""
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id in ("dict", "Dict")


def _strings_of(e: ast.expr) -> list[str]:
    items = e.elts if isinstance(e, (ast.List, ast.Tuple, ast.Set)) else [e]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def _loop_tests(body: list[ast.stmt], var: str) -> tuple[set[str], set[str]]:
    """The keys a loop over a batch skips (`if key in [...]: continue`) and those it names (`if key in [...]:`)."""
    skipped: set[str] = set()
    named: set[str] = set()
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
            continue
        test = node.test
        if not (isinstance(test.left, ast.Name) and test.left.id == var and len(test.ops) == 1):
            continue
        if not isinstance(test.ops[0], (ast.In, ast.Eq)):
            continue
        keys = set(_strings_of(test.comparators[0]))
        if len(node.body) == 1 and isinstance(node.body[0], ast.Continue):
            skipped |= keys
        else:
            named |= keys
    return skipped, named - skipped


def _evaluate(e: ast.expr, env: dict[str, str]) -> str | None:
    """A string expression over known names: constants, f-strings and `a if name == "x" else b`."""
    if isinstance(e, ast.Constant):
        return e.value if isinstance(e.value, str) else None
    if isinstance(e, ast.Name):
        return env.get(e.id)
    if isinstance(e, ast.JoinedStr):
        parts = [_evaluate(v.value if isinstance(v, ast.FormattedValue) else v, env) for v in e.values]
        return "".join(p for p in parts if p is not None) if all(p is not None for p in parts) else None
    if isinstance(e, ast.IfExp) and isinstance(e.test, ast.Compare) and len(e.test.ops) == 1:
        left, right = _evaluate(e.test.left, env), _evaluate(e.test.comparators[0], env)
        op = e.test.ops[0]
        if left is None or right is None or not isinstance(op, (ast.Eq, ast.NotEq)):
            return None
        return _evaluate(e.body if (left == right) == isinstance(op, ast.Eq) else e.orelse, env)
    return None


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _is_self_attr(e: ast.expr) -> bool:
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"


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
