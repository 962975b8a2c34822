"""TensorBoard files are framed and checksummed here (google-crc32c in C), parsed by the package's protobuf:
every record the package's own reader reads, and every byte it would reject, a finding."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import run_forms
from judge_fixture import clean_run
from metrics_manual.api import judge
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import tensorboard
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.read import read_run
from miles_runs import MILES, bad, miles_profile, need, read, result

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import event_file_loader  # noqa: E402
from tensorboard.compat.proto import event_pb2, summary_pb2  # noqa: E402
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c as python_crc32c  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402

STEP_KEYS = {"train": "train/step", "rollout": "rollout/step"}
# Tags of different lengths: records of several lengths, so the cache of length checksums hits and misses.
KEYS = ["train/loss", "train/grad_norm", "rollout/raw_reward", "train/a_much_longer_key_than_the_others"]


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return miles_profile(tmp_path_factory)


def _write(folder: Path, steps: int = 6) -> Path:
    """A run as SummaryWriter.add_scalar writes it (a scalar an event), by the package's own writer."""
    w = EventFileWriter(str(folder))
    for step in range(steps):
        for i, key in enumerate([*KEYS, "train/step"]):
            value = summary_pb2.Summary.Value(tag=key, simple_value=step if key == "train/step" else step * 10 + i / 4)
            w.add_event(event_pb2.Event(step=step, wall_time=1.0 + step, summary=summary_pb2.Summary(value=[value])))
    w.close()
    (path,) = folder.glob("*tfevents*")
    return path


def _read(path: Path) -> Collector:
    out = Collector(STEP_KEYS)
    out.begin(str(path))
    tensorboard.read(path, str(path), out)
    out.end()
    return out


def _values(out: Collector) -> dict[str, list[tuple[int, float]]]:
    return {k: list(s.items()) for k, s in out.finish().series.items()}


def _package_values(path: Path) -> dict[str, list[tuple[int, float]]]:
    """What the tensorboard package's own record reader reads from the same file."""
    got: dict[str, list[tuple[int, float]]] = {}
    for record in event_file_loader._make_tf_record_iterator(str(path)):
        event = event_pb2.Event.FromString(record)
        for v in event.summary.value:
            got.setdefault(v.tag, []).append((event.step, v.simple_value))
    return got


def _offsets(path: Path) -> list[int]:
    """Where each record starts."""
    data, at, out = path.read_bytes(), 0, []
    while at < len(data):
        out.append(at)
        at += 16 + struct.unpack_from("<Q", data, at)[0]
    return out


def _frame(payload: bytes) -> bytes:
    head = struct.pack("<Q", len(payload))
    return (
        head
        + struct.pack("<I", tensorboard.masked(python_crc32c(head)))
        + payload
        + struct.pack("<I", tensorboard.masked(python_crc32c(payload)))
    )


def test_every_scalar_the_package_reads_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "tb")
    out = _read(path)
    assert out.problems == []
    assert _values(out) == _package_values(path) and len(_values(out)["train/loss"]) == 6


def test_a_record_longer_than_a_chunk_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "tb")
    monkeypatch.setattr(tensorboard, "CHUNK", 7)  # every record spans chunks
    out = _read(path)
    assert out.problems == [] and _values(out) == _package_values(path)


def test_the_pure_python_checksum_reads_the_same_frames(tmp_path: Path) -> None:
    path = _write(tmp_path / "tb")
    with path.open("rb") as fh:
        fast = list(tensorboard.frames(fh, tensorboard._crc32c()))
    with path.open("rb") as fh:
        slow = list(tensorboard.frames(fh, python_crc32c))
    assert fast == slow and len(fast) == len(_offsets(path))
    assert tensorboard._crc32c()(b"123456789") == python_crc32c(b"123456789") == 0xE3069283


# A flipped byte in each part of a record: its length (a length the file also holds elsewhere, so the
# cache of length checksums is tried), the length's checksum, the event's bytes, their checksum.
@pytest.mark.parametrize(("part", "at"), [("length", 0), ("length checksum", 9), ("bytes", 14), ("bytes checksum", -1)])
def test_a_corrupt_record_is_an_error_and_the_records_before_it_are_read(part: str, at: int, tmp_path: Path) -> None:
    path = _write(tmp_path / "tb")
    offsets = _offsets(path)
    k = 12  # the 13th record (a file_version event comes first)
    data = bytearray(path.read_bytes())
    start = offsets[k]
    data[start + at if at >= 0 else offsets[k + 1] + at] ^= 0x01
    path.write_bytes(bytes(data))
    out = _read(path)
    assert [(p.line, p.severity, p.code.name) for p in out.problems] == [(k + 1, "error", "corrupt-line")], part
    assert "the rest of the file was skipped" in out.problems[0].message
    assert out.cut_files == []
    read = sum(len(v) for v in _values(out).values())
    assert read == k - 1  # every scalar of the records before it


def test_every_cut_inside_the_last_record_is_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path / "tb", steps=2)
    whole = path.read_bytes()
    offsets = _offsets(path)
    for end in range(offsets[-1] + 1, len(whole)):
        path.write_bytes(whole[:end])
        out = _read(path)
        assert [(p.line, p.severity) for p in out.problems] == [(len(offsets), "warning")], end
        assert out.cut_files == [str(path)]


def test_checksummed_bytes_that_are_not_an_event_are_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "tb", steps=1)
    path.write_bytes(path.read_bytes() + _frame(b"\xff\xff\xff"))
    out = _read(path)
    assert [(p.line, p.severity, p.code.name) for p in out.problems] == [(len(_offsets(path)), "error", "corrupt-line")]


def test_a_length_beyond_the_file_is_a_cut_record_not_a_huge_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "tb", steps=1)
    head = struct.pack("<Q", 2**64 - 1)
    path.write_bytes(path.read_bytes() + head + struct.pack("<I", tensorboard.masked(python_crc32c(head))) + b"x" * 9)
    out = _read(path)
    assert [p.severity for p in out.problems] == ["warning"] and out.cut_files == [str(path)]


def test_without_google_crc32c_the_package_s_own_checksum_reads_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "tb")
    monkeypatch.setitem(sys.modules, "google_crc32c", None)  # an import of it fails
    assert tensorboard._crc32c() is python_crc32c
    out = _read(path)
    assert out.problems == [] and _values(out) == _package_values(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(min_value=0, max_value=1, exclude_max=True), bit=st.integers(min_value=0, max_value=7))
def test_any_flipped_bit_is_an_error_never_silence(tmp_path: Path, where: float, bit: int) -> None:
    path = tmp_path / "tb" / "events.out.tfevents.1.host"
    if not path.exists():
        _write(tmp_path / "tb", steps=2).rename(path)
    whole = path.read_bytes()
    data = bytearray(whole)
    data[int(where * len(data))] ^= 1 << bit
    flipped = tmp_path / "flipped.tfevents"
    flipped.write_bytes(bytes(data))
    out = _read(flipped)
    assert [(p.severity, p.code.name) for p in out.problems] == [("error", "corrupt-line")]


def test_records_written_while_the_file_is_read_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live run's file grows between the reader's chunks: the records it gained are read too, none cut."""
    path = _write(tmp_path / "tb", steps=4)
    whole = path.read_bytes()
    first = _offsets(path)[10]
    path.write_bytes(whole[:first])  # the file as the reader opens it: whole records only
    monkeypatch.setattr(tensorboard, "CHUNK", 40)
    real = tensorboard.frames

    def grows(fh, crc):
        for n, data in enumerate(real(fh, crc)):
            if n == 0:
                path.write_bytes(whole)  # the writer appends the rest
            yield data

    monkeypatch.setattr(tensorboard, "frames", grows)
    out = _read(path)
    assert out.problems == [] and _values(out) == _package_values(path)


def test_reading_scalars_imports_only_the_event_protobuf(tmp_path: Path) -> None:
    """numpy and the package's TensorFlow stub (0.2 s of imports) come only with a tensor value."""
    path = _write(tmp_path / "tb")
    code = (
        "import sys\nfrom pathlib import Path\nfrom metrics_manual.runs import tensorboard\n"
        "from metrics_manual.runs.collect import Collector\n"
        f"out = Collector({STEP_KEYS!r})\ntensorboard.read(Path({str(path)!r}), 'x', out)\n"
        "assert not out.problems and out.series['train/loss']\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'tensorboard')))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ran.stdout.split("\n")[-2]
    assert "numpy" not in loaded and "tensorflow_stub" not in loaded and "event_pb2" in loaded, loaded


# --- judged: every scalar, a corrupt or cut file, the extra ---------------------------------------


def test_tensorboard_values_after_a_tag_s_first_are_read(profile: ProfileExport) -> None:
    need("tensorboard")
    j = judge(profile, read([MILES / "tensorboard-tf"], profile))
    assert bad(j) == {} and j.exit_code == 0
    grad = result(j, "train/grad_norm")
    assert grad.steps_judged == 100
    run = read([MILES / "tensorboard-tf"], profile)
    assert len(run.series["train/grad_norm"]) == 100 and run.series["train/grad_norm"][19] == pytest.approx(1.09)


def test_a_tensor_of_a_tag_first_named_by_another_plugin_is_not_a_scalar(tmp_path: Path) -> None:
    need("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.plugins.scalar.summary_v2 import scalar_pb
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(tmp_path))
    for step in range(3):
        for tag, plugin in (("train/grad_norm", "scalars"), ("train/hist", "histograms")):
            summary = scalar_pb(tag, 1.0 + step)
            summary.value[0].metadata.plugin_data.plugin_name = plugin
            if step:  # as TensorFlow's writer: the metadata on the first value only
                summary.value[0].ClearField("metadata")
            writer.add_event(event_pb2.Event(step=step, wall_time=1796000000.0 + step, summary=summary))
    writer.add_event(event_pb2.Event(step=3, summary=summary_pb2.Summary()))
    writer.close()
    run = read_run([tmp_path], STEP_KEYS)
    assert dict(run.series["train/grad_norm"].items()) == {0: 1.0, 1: 2.0, 2: 3.0}
    assert "train/hist" not in run.series and not run.problems
    assert tensorboard.__doc__ and "first value" in tensorboard.__doc__


def test_tensorboard_without_the_extra_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_tensorboard(name: str, *args, **kw):
        if name.startswith("tensorboard"):
            raise ImportError(name)
        return real(name, *args, **kw)

    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"\0" * 32)
    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    from metrics_manual.diagnostics.finding import MissingExtra

    with pytest.raises(MissingExtra, match=r"pip install 'metrics-manual\[tensorboard\]'"):
        read_run([tmp_path], STEP_KEYS)


def test_tensorboard_reads_every_scalar_not_a_sample(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    n = 10_050  # EventAccumulator's default keeps 10,000 per tag
    run_forms.write_tensorboard({"train/grad_norm": {s: 1.0 + s % 7 for s in range(n)}}, tmp_path / "tb")
    read = read_run([tmp_path / "tb"], STEP_KEYS)
    assert read.formats == ["tensorboard"]
    assert len(read.series["train/grad_norm"]) == n and read.series["train/grad_norm"][n - 1] == 1.0 + (n - 1) % 7


def test_a_corrupt_tensorboard_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    (path,) = run_forms.write_tensorboard({"train/grad_norm": {s: 1.0 for s in range(5)}}, tmp_path / "tb")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte: the record's checksum no longer matches
    path.write_bytes(bytes(data))
    read = read_run([path], STEP_KEYS)
    assert [(p.path, p.severity) for p in read.problems] == [(str(path), "error")]


def test_a_cut_last_tensorboard_record_is_a_warning(tmp_path: Path, profile: ProfileExport) -> None:
    pytest.importorskip("tensorboard")
    files = run_forms.write_tensorboard(clean_run(), tmp_path / "tb")
    files[0].write_bytes(
        files[0].read_bytes() + b"\x40\x00\x00\x00\x00\x00\x00\x00\x01\x02"
    )  # a header, then the writer stopped
    j = judge(profile, read_run([tmp_path / "tb"], run_forms.STEP_KEYS))
    assert [(p.path, p.severity) for p in j.problems] == [(str(files[0]), "warning")]
    assert bad(j) == {} and j.exit_code == 0
