"""Which processes put their timers into the tracker: a Miles checkout's processes, read with `ast`.

Miles' `Timer` is one object per process (`class Timer(metaclass=SingletonMeta)`: the metaclass keeps one
instance per class in a class-level dict). `timer("x")`, `@timer`, `Timer().start("x")` and `inverse_timer("x")`
only add seconds to that object; the seconds reach the tracker as `perf/x_time` only where a *flush* runs in
the same process: a function that reads `Timer().log_dict()` (`log_perf_data_raw`, which the Megatron trainer
reaches from `train_actor` through `log_perf_data`, and the FSDP trainer from `train`). A timer that runs in a
process that never flushes (the critic's `critic_train`, the rollout manager's `eval_rollout`) is timed, never
logged. The model, kept simple and explicit:

- A process is a class another process calls: one of its methods is called remotely (`x.m.remote(...)`) or
  dispatched by name (its name the first argument of a call, as the actor groups do: `self._broadcast("sleep")`).
  Its entries are `__init__` and those methods. A class with roles (the literals of a `role: Literal[...]`
  parameter of its methods, and those `self.role` is compared with) is one process per role; in a role, the
  branch of `if self.role == "critic":` (or of `if role == ...` on a method's `role` parameter) that the role
  does not take never runs.
- A module-level function that reaches a flush is also an entry, of a process of its own (a script's).
- From its entries a process runs what their calls reach in the same process: `f(...)` (a function of the
  module or an imported one; a class: its `__init__`), a local bound to named functions (`f = g; f(...)`),
  `self.m(...)` (the class and its bases), `self.attr.m(...)` (the classes assigned to `self.attr`),
  `module.f(...)`, `Class.m(...)`. Not followed: `x.m.remote(...)` (another process), calls on other objects
  (their class is not known), functions passed as values. Decorators, lambdas and nested functions run with
  the function that holds them.
- A timer is logged when a process that runs it also reaches a flush (when in the step it runs is not modelled).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

Site = tuple[str, int]  # (path, line) of a timer
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class _Mod:
    path: str
    dotted: str
    tree: ast.Module
    functions: dict[str, FunctionNode] = field(default_factory=dict)  # module level
    classes: dict[str, _Cls] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias -> (module, name or None)


@dataclass(eq=False)
class _Cls:
    name: str
    mod: _Mod
    node: ast.ClassDef
    methods: dict[str, FunctionNode] = field(default_factory=dict)


@dataclass(frozen=True)
class _Fn:
    node: FunctionNode
    mod: _Mod
    owner: _Cls | None  # the class that defines it


@dataclass
class _Body:
    """What one function does when it runs in a role: its calls, timers, flushes, loss types."""

    calls: list[ast.Call] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)
    flushes: bool = False
    loss_types: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Process:
    label: str  # `MegatronTrainRayActor (role critic)`, `miles.utils.foo.main()`
    role: str | None
    flushes: bool


@dataclass
class ProcessModel:
    """The processes of a checkout, the timers each runs, and whether it flushes them into the tracker."""

    processes: list[Process] = field(default_factory=list)
    runs: dict[Site, list[str]] = field(default_factory=dict)  # a timer -> the processes that run it
    logged_sites: set[Site] = field(default_factory=set)  # timers run by a process that flushes
    roles: list[str] = field(default_factory=list)  # every role of a process class
    loss_types: dict[str, set[str]] = field(default_factory=dict)  # role -> `x.loss_type = "..."` it runs

    def logged(self, site: Site) -> bool:
        return site in self.logged_sites


def is_timer_call(call: ast.Call) -> bool:
    """`timer("x")`, `inverse_timer("x")` or `Timer().start("x")`: the first argument names the timer."""
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    if name in ("timer", "inverse_timer") and len(call.args) == 1:
        return True
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "start"
        and isinstance(f.value, ast.Call)
        and _name_of(f.value.func) == "Timer"
        and len(call.args) == 1
    )


def is_timer_decorator(d: ast.expr) -> bool:
    """`@timer` on a function: the timer is named after it."""
    return isinstance(d, ast.Name) and d.id == "timer" or isinstance(d, ast.Attribute) and d.attr == "timer"


def timer_sites(path: str, fn: FunctionNode) -> Iterator[tuple[int, ast.Call | None]]:
    """The timers a function's decorators start: `@timer` (no call) and timer calls inside decorators."""
    for d in fn.decorator_list:
        if is_timer_decorator(d):
            yield d.lineno, None
        for call in (n for n in ast.walk(d) if isinstance(n, ast.Call)):
            if is_timer_call(call):
                yield call.lineno, call


def _name_of(e: ast.expr) -> str | None:
    return e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None


def _literals(e: ast.expr | None) -> list[str]:
    """The strings of `Literal["a", "b"]`."""
    if not (isinstance(e, ast.Subscript) and _name_of(e.value) == "Literal"):
        return []
    items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def _params(fn: FunctionNode) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


class _Model:
    def __init__(self, modules: Iterable[tuple[str, str, ast.Module]]) -> None:
        self.mods: dict[str, _Mod] = {}
        self.fns: dict[FunctionNode, _Fn] = {}
        self.remote: set[str] = set()  # method names another process calls
        for path, dotted, tree in modules:
            self._index(_Mod(path, dotted, tree))
        self._mro: dict[_Cls, list[_Cls]] = {}
        self._attrs: dict[tuple[_Cls, str], list[_Cls]] = {}
        self._bodies: dict[tuple[FunctionNode, str | None], _Body] = {}
        self._locals: dict[FunctionNode, dict[str, list[ast.expr]]] = {}

    # --- the index -------------------------------------------------------------------

    def _index(self, mod: _Mod) -> None:
        """One walk of a module: its imports, functions, classes and methods, and the names called remotely."""
        self.mods[mod.dotted] = mod
        for stmt in mod.tree.body:
            if isinstance(stmt, ast.ClassDef):
                mod.classes[stmt.name] = _Cls(stmt.name, mod, stmt)
        todo: list[tuple[ast.AST, _Cls | None]] = [(mod.tree, None)]
        while todo:
            parent, cls = todo.pop()
            for node in ast.iter_child_nodes(parent):
                owner = None
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.fns[node] = _Fn(node, mod, cls)
                    if cls is not None:
                        cls.methods[node.name] = node
                    elif parent is mod.tree:
                        mod.functions[node.name] = node
                elif isinstance(node, ast.ClassDef):
                    owner = mod.classes.get(node.name) if parent is mod.tree else None
                elif isinstance(node, ast.ImportFrom):
                    base = absolute_module(mod.dotted, mod.path, node)
                    for a in node.names:
                        mod.imports[a.asname or a.name] = (base, a.name)
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname:
                            mod.imports[a.asname] = (a.name, None)
                elif isinstance(node, ast.Call):
                    self.remote |= _remote_names(node)
                todo.append((node, owner))

    def resolve_name(self, mod: _Mod, name: str, depth: int = 0) -> FunctionNode | _Cls | _Mod | None:
        """What a name means at the top of a module: its function or class, or what it imports."""
        if name in mod.functions:
            return mod.functions[name]
        if name in mod.classes:
            return mod.classes[name]
        if name not in mod.imports or depth > 4:
            return None
        base, attr = mod.imports[name]
        if attr is None:
            return self.mods.get(base)
        if f"{base}.{attr}" in self.mods:
            return self.mods[f"{base}.{attr}"]
        src = self.mods.get(base)
        return self.resolve_name(src, attr, depth + 1) if src is not None else None

    def mro(self, c: _Cls) -> list[_Cls]:
        if c not in self._mro:
            self._mro[c] = [c]  # a cycle stops here
            out = [c]
            for b in c.node.bases:
                target = self._resolve_expr(c.mod, b)
                if isinstance(target, _Cls):
                    out += [x for x in self.mro(target) if x not in out]
            self._mro[c] = out
        return self._mro[c]

    def _resolve_expr(self, mod: _Mod, e: ast.expr) -> FunctionNode | _Cls | _Mod | None:
        if isinstance(e, ast.Name):
            return self.resolve_name(mod, e.id)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            base = self.resolve_name(mod, e.value.id)
            if isinstance(base, _Mod):
                return self.resolve_name(base, e.attr)
        return None

    def method(self, c: _Cls, name: str, after: _Cls | None = None) -> tuple[FunctionNode, _Cls] | None:
        chain = self.mro(c)
        if after is not None and after in chain:
            chain = chain[chain.index(after) + 1 :]
        for k in chain:
            if name in k.methods:
                return k.methods[name], k
        return None

    def attr_classes(self, c: _Cls, attr: str) -> list[_Cls]:
        """The classes a process assigns to `self.attr` (`self.x = K(...)`, or `k = K1` ... `self.x = k(...)`)."""
        key = (c, attr)
        if key not in self._attrs:
            found: list[_Cls] = []
            for k in self.mro(c):
                for fn in k.methods.values():
                    local = self.assigned(fn)
                    for node in ast.walk(fn):
                        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
                            continue
                        if not any(_is_self_attr(t, attr) for t in node.targets):
                            continue
                        for name in _callee_names(node.value.func, local):
                            target = self.resolve_name(k.mod, name)
                            if isinstance(target, _Cls) and target not in found:
                                found.append(target)
            self._attrs[key] = found
        return self._attrs[key]

    def assigned(self, fn: FunctionNode) -> dict[str, list[ast.expr]]:
        if fn not in self._locals:
            self._locals[fn] = _assigned(fn)
        return self._locals[fn]

    # --- what a function does ----------------------------------------------------------

    def body(self, fn: _Fn, role: str | None) -> _Body:
        key = (fn.node, role)
        if key not in self._bodies:
            self._bodies[key] = self._read_body(fn, role)
        return self._bodies[key]

    def _read_body(self, fn: _Fn, role: str | None) -> _Body:
        out = _Body()
        path = fn.mod.path
        out.sites += [(path, line) for line, _ in timer_sites(path, fn.node)]
        params = {p.arg for p in _params(fn.node)}
        timers = {n for n, vs in self.assigned(fn.node).items() if any(_is_timer_object(v) for v in vs)}
        decorators = [n for d in fn.node.decorator_list for n in ast.walk(d)]
        for node in [*decorators, *_run(fn.node.body, role, params)]:
            if isinstance(node, ast.Call):
                out.calls.append(node)
                if node not in decorators and is_timer_call(node):
                    out.sites.append((path, node.lineno))
                f = node.func
                if isinstance(f, ast.Attribute) and f.attr == "log_dict":
                    if _is_timer_object(f.value) or isinstance(f.value, ast.Name) and f.value.id in timers:
                        out.flushes = True
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str) and any(
                    isinstance(t, ast.Attribute) and t.attr == "loss_type" for t in node.targets
                ):
                    out.loss_types.add(node.value.value)
        return out

    def callees(self, fn: _Fn, call: ast.Call, self_cls: _Cls | None) -> list[tuple[_Fn, _Cls | None]]:
        """The functions a call reaches in the same process, with the class of their `self`."""
        f = call.func
        found: list[tuple[FunctionNode, _Cls | None]] = []
        if isinstance(f, ast.Name):
            for name in _callee_names(f, self.assigned(fn.node)):
                found += self._named(fn.mod, name)
        elif isinstance(f, ast.Attribute):
            v = f.value
            if isinstance(v, ast.Name) and v.id in ("self", "cls") and self_cls is not None:
                m = self.method(self_cls, f.attr)
                found += [(m[0], self_cls)] if m else []
            elif isinstance(v, ast.Call) and _name_of(v.func) == "super" and self_cls is not None:
                m = self.method(self_cls, f.attr, after=fn.owner)
                found += [(m[0], self_cls)] if m else []
            elif _is_self_attr(v) and self_cls is not None:
                assert isinstance(v, ast.Attribute)
                for k in self.attr_classes(self_cls, v.attr):
                    m = self.method(k, f.attr)
                    found += [(m[0], k)] if m else []
            elif isinstance(v, ast.Name):
                target = self.resolve_name(fn.mod, v.id)
                if isinstance(target, _Mod):
                    found += self._named(target, f.attr)
                elif isinstance(target, _Cls):
                    m = self.method(target, f.attr)
                    found += [(m[0], None)] if m else []
        return [(self.fns[node], cls) for node, cls in found if node in self.fns]

    def _named(self, mod: _Mod, name: str) -> list[tuple[FunctionNode, _Cls | None]]:
        target = self.resolve_name(mod, name)
        if isinstance(target, _Cls):
            m = self.method(target, "__init__")
            return [(m[0], target)] if m else []
        if isinstance(target, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return [(target, None)]
        return []

    # --- processes -----------------------------------------------------------------------

    def roles(self, c: _Cls) -> list[str]:
        found: list[str] = []
        for k in self.mro(c):
            for fn in k.methods.values():
                params = {p.arg for p in _params(fn)}
                for p in _params(fn):
                    if p.arg == "role":
                        found += _literals(p.annotation)
                for node in ast.walk(fn):
                    if isinstance(node, ast.Compare) and _role_subject(node.left, params):
                        found += [
                            o.value
                            for o in node.comparators
                            if isinstance(o, ast.Constant) and isinstance(o.value, str)
                        ]
        return list(dict.fromkeys(found))

    def flushing_functions(self) -> list[FunctionNode]:
        """The module-level functions that reach a flush (one walk of the call graph, then back from the flushes)."""
        tops = [(fn, None) for mod in self.mods.values() for fn in mod.functions.values()]
        callers: dict[tuple[FunctionNode, _Cls | None], list[tuple[FunctionNode, _Cls | None]]] = {}
        seen: set[tuple[FunctionNode, _Cls | None]] = set()
        flushing: list[tuple[FunctionNode, _Cls | None]] = []
        todo: list[tuple[FunctionNode, _Cls | None]] = list(tops)
        while todo:
            state = todo.pop()
            if state in seen:
                continue
            seen.add(state)
            fn = self.fns[state[0]]
            b = self.body(fn, None)
            if b.flushes:
                flushing.append(state)
            for call in b.calls:
                for callee, cls in self.callees(fn, call, state[1]):
                    callers.setdefault((callee.node, cls), []).append(state)
                    todo.append((callee.node, cls))
        reach = set(flushing)
        while flushing:
            for caller in callers.get(flushing.pop(), []):
                if caller not in reach:
                    reach.add(caller)
                    flushing.append(caller)
        return [fn for fn, cls in tops if (fn, cls) in reach]

    def run_process(self, entries: list[tuple[_Fn, _Cls | None]], role: str | None, proc: _Cls | None) -> _Body:
        """Everything a process runs from its entries: the union of the bodies it reaches."""
        total = _Body()
        seen: set[tuple[FunctionNode, _Cls | None]] = set()
        todo = list(entries)
        while todo:
            fn, self_cls = todo.pop()
            if (fn.node, self_cls) in seen:
                continue
            seen.add((fn.node, self_cls))
            # A role prunes branches only in the process class's own methods (`self.role` is the process's role).
            b = self.body(fn, role if proc is not None and self_cls is proc else None)
            total.sites += b.sites
            total.flushes |= b.flushes
            total.loss_types |= b.loss_types
            for call in b.calls:
                todo += self.callees(fn, call, self_cls)
        return total


def absolute_module(dotted: str, path: str, node: ast.ImportFrom) -> str:
    """The module an import names, relative imports resolved from the importing module."""
    if not node.level:
        return node.module or ""
    parts = dotted.split(".")
    keep = len(parts) - (node.level - 1 if path.endswith("__init__.py") else node.level)
    return ".".join([*parts[: max(keep, 0)], *([node.module] if node.module else [])])


def _is_self_attr(e: ast.expr, attr: str | None = None) -> bool:
    return (
        isinstance(e, ast.Attribute)
        and isinstance(e.value, ast.Name)
        and e.value.id == "self"
        and (attr is None or e.attr == attr)
    )


def _is_timer_object(e: ast.expr) -> bool:
    return isinstance(e, ast.Call) and _name_of(e.func) == "Timer"


def _assigned(fn: FunctionNode) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
    return out


def _callee_names(f: ast.expr, local: dict[str, list[ast.expr]]) -> list[str]:
    """The names a called name stands for: itself, or the named functions a local was bound to."""
    if not isinstance(f, ast.Name):
        return []
    values = local.get(f.id, [])
    names = [v.id for v in values if isinstance(v, ast.Name)]
    return names if names else [f.id]


def _role_subject(e: ast.expr, params: set[str]) -> bool:
    return _is_self_attr(e, "role") or isinstance(e, ast.Name) and e.id == "role" and "role" in params


def _role_test(test: ast.expr, role: str, params: set[str]) -> bool | None:
    """`self.role == "critic"` (or `!=`, or on a `role` parameter) in a role: taken or not; None when not a role test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and _role_subject(test.left, params)):
        return None
    other = test.comparators[0]
    if not (isinstance(other, ast.Constant) and isinstance(other.value, str)):
        return None
    if isinstance(test.ops[0], ast.Eq):
        return role == other.value
    if isinstance(test.ops[0], ast.NotEq):
        return role != other.value
    return None


def _run(body: list[ast.stmt], role: str | None, params: set[str]) -> Iterator[ast.AST]:
    """The nodes of a body that run in a role: the branch of a role test the role does not take is left out."""
    todo: list[ast.AST] = list(reversed(body))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and role is not None:
            taken = _role_test(node.test, role, params)
            if taken is not None:
                todo += reversed(node.body if taken else node.orelse)
                continue
        todo += reversed(list(ast.iter_child_nodes(node)))


def process_model(modules: Iterable[tuple[str, str, ast.Module]]) -> ProcessModel:
    """The processes of the modules `(path, dotted name, tree)`, and which timers they flush."""
    m = _Model(modules)
    out = ProcessModel()
    runs: list[tuple[Process, list[Site]]] = []
    for mod in m.mods.values():
        for c in mod.classes.values():
            names = {n for k in m.mro(c) for n in k.methods} & m.remote
            if not names:
                continue
            entries: list[tuple[_Fn, _Cls | None]] = []
            for n in sorted(names | {"__init__"}):
                found = m.method(c, n)
                if found is not None:
                    entries.append((m.fns[found[0]], c))
            roles: list[str | None] = [*m.roles(c)] or [None]
            for role in roles:
                b = m.run_process(entries, role, c)
                label = c.name + (f" (role {role})" if role else "")
                runs.append((Process(label, role, b.flushes), b.sites))
                if role is not None:
                    out.roles.append(role)
                    out.loss_types.setdefault(role, set()).update(b.loss_types)
    for fn in m.flushing_functions():
        b = m.run_process([(m.fns[fn], None)], None, None)
        runs.append((Process(f"{m.fns[fn].mod.dotted}.{fn.name}()", None, True), b.sites))
    out.roles = list(dict.fromkeys(out.roles))
    for proc, sites in runs:
        out.processes.append(proc)
        for s in dict.fromkeys(sites):
            out.runs.setdefault(s, []).append(proc.label)
            if proc.flushes:
                out.logged_sites.add(s)
    return out


def _remote_names(call: ast.Call) -> set[str]:
    """A method name another process calls: `x.m.remote(...)`, or a name given first to a call (`_broadcast("m")`)."""
    out: set[str] = set()
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "remote" and isinstance(f.value, ast.Attribute):
        out.add(f.value.attr)
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.isidentifier():
        out.add(first.value)
    return out
