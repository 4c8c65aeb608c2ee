"""`idemsim site DIR`: the lockfile, the download cache, idemsim's own wheel and the static site they make.

The lockfile and the cache are tested without the network (the cache's downloads from ``file://`` URLs). The
tests marked slow build a whole site, downloading Pyodide and the wheels from npm and PyPI into a cache once per
session (``IDEMSIM_CACHE`` when set, so a machine that has them builds offline); with no network they are
skipped with the reason, except under ``CI=true``, where that is a failure. The browser tests
(tests/test_web_browser.py) load the site in Chromium.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from idemsim import kernel
from idemsim.base.errors import InputError
from idemsim.base.i18n import LANGS
from idemsim.base.paths import scenarios_dir
from idemsim.scenario.schema import builtin_names
from idemsim.web import downloads, engine
from idemsim.web.downloads import cache_dir, fetched, integrity_hex, lock
from idemsim.web.site import PAGE, build_site
from idemsim.web.wheel import PACKAGE, idemsim_wheel

WHEELS = {entry["name"]: entry for entry in lock()["wheels"]}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TestLock:
    def test_pyodide_pydantic_and_pydantic_core_are_pinned_together(self):
        """Pyodide 314.x, pydantic 2.14.x and pydantic-core 2.50.x built for Pyodide's Python and ABI."""
        pyodide = lock()["pyodide"]
        assert pyodide["version"].startswith("314.")
        assert pyodide["python"] == "3.14" and pyodide["abi"] == "2026_0"
        assert WHEELS["pydantic"]["version"].startswith("2.14.")
        core = WHEELS["pydantic-core"]
        assert core["version"].startswith("2.50.")
        assert core["file"] == f"pydantic_core-{core['version']}-cp314-cp314-pyemscripten_2026_0_wasm32.whl"

    def test_pydantic_requires_exactly_the_locked_pydantic_core(self):
        """pydantic pins pydantic-core==X in its metadata: the lock's pydantic-core is X."""
        assert WHEELS["pydantic"]["requires"] == {"pydantic-core": f"=={WHEELS['pydantic-core']['version']}"}

    def test_the_installed_pydantic_agrees_when_it_is_the_locked_one(self):
        """The pydantic installed here, when it is the locked version, pins the locked pydantic-core too."""
        if importlib.metadata.version("pydantic") != WHEELS["pydantic"]["version"]:
            pytest.skip(f"pydantic {importlib.metadata.version('pydantic')} installed, not the locked one")
        pins = [line for line in importlib.metadata.requires("pydantic") if line.startswith("pydantic-core")]
        assert pins == [f"pydantic-core=={WHEELS['pydantic-core']['version']}"]

    def test_the_browser_s_simpy_is_the_release_the_kernel_was_checked_against(self):
        """idemsim.kernel relies on SimPy's internals of one release: the browser gets that release."""
        assert WHEELS["simpy"]["version"].rsplit(".", 1)[0] == kernel.SIMPY_CHECKED

    def test_every_file_is_pinned_by_url_and_hash(self):
        """Each download names its registry's URL and a full hash; each wheel file is its URL's last part."""
        pyodide = lock()["pyodide"]
        assert pyodide["url"] == (f"https://registry.npmjs.org/pyodide/-/pyodide-{pyodide['version']}.tgz")
        algorithm, hexdigest = integrity_hex(pyodide["integrity"])
        assert algorithm == "sha512" and len(hexdigest) == 128
        assert {"pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"} <= set(pyodide["files"])
        for entry in WHEELS.values():
            assert entry["url"].startswith("https://files.pythonhosted.org/packages/")
            assert entry["url"].rsplit("/", 1)[1] == entry["file"]
            assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"])
            name, version = entry["file"].split("-")[:2]
            assert re.sub(r"[-_.]+", "-", name).lower() == entry["name"] and version == entry["version"]
            if entry["name"] != "pydantic-core":
                assert entry["file"].endswith("-py3-none-any.whl")

    def test_dependencies_are_locked_and_come_first(self):
        """Every wheel a wheel depends on is locked, earlier in the list; simpy and pydantic are there."""
        seen = set()
        for entry in lock()["wheels"]:
            assert set(entry["depends"]) <= seen, entry["name"]
            seen.add(entry["name"])
        assert {"simpy", "pydantic"} <= seen


class TestCache:
    @pytest.fixture
    def source(self, tmp_path) -> tuple[str, bytes]:
        data = b"a wheel's bytes\n" * 100
        path = tmp_path / "served" / "thing-1.0-py3-none-any.whl"
        path.parent.mkdir()
        path.write_bytes(data)
        return path.as_uri(), data

    def test_the_cache_is_idemsim_cache_or_the_home_cache(self, monkeypatch, tmp_path):
        """``$IDEMSIM_CACHE``/web, else ``~/.cache/idemsim/web``; an explicit cache wins over both."""
        monkeypatch.setenv("IDEMSIM_CACHE", str(tmp_path / "c"))
        assert cache_dir() == tmp_path / "c" / "web"
        assert cache_dir(tmp_path / "given") == tmp_path / "given" / "web"
        monkeypatch.delenv("IDEMSIM_CACHE")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert cache_dir() == tmp_path / "home" / ".cache" / "idemsim" / "web"

    def test_a_verified_file_is_reused_without_the_network(self, tmp_path, source):
        """Downloaded once; then the file in the cache is used, even when its URL no longer answers."""
        url, data = source
        target = tmp_path / "cache" / "thing.whl"
        assert fetched(url, target, "sha256", _sha256(data)).read_bytes() == data
        Path(url.removeprefix("file://")).unlink()
        assert fetched(url, target, "sha256", _sha256(data)).read_bytes() == data
        assert sorted(p.name for p in target.parent.iterdir()) == ["thing.whl"]

    def test_a_download_tells_its_bytes_as_they_come(self, tmp_path, source):
        """``advance`` is told each block's size: they add up to the file's; nothing is told for a cached file."""
        url, data = source
        told = []
        fetched(url, tmp_path / "cache" / "thing.whl", "sha256", _sha256(data), told.append)
        assert sum(told) == len(data) and all(told)
        fetched(url, tmp_path / "cache" / "thing.whl", "sha256", _sha256(data), told.append)
        assert sum(told) == len(data)

    def test_a_corrupted_cache_file_is_fetched_again(self, tmp_path, source):
        """A cached file whose hash is not the lock's (changed, cut short) is replaced by a fresh download."""
        url, data = source
        target = tmp_path / "cache" / "thing.whl"
        fetched(url, target, "sha256", _sha256(data))
        target.write_bytes(data[:-10])
        assert fetched(url, target, "sha256", _sha256(data)).read_bytes() == data

    def test_a_download_that_does_not_match_is_refused(self, tmp_path, source):
        """One line naming the URL and both hashes; nothing is left in the cache, not even a partial file."""
        url, data = source
        target = tmp_path / "cache" / "thing.whl"
        with pytest.raises(InputError) as raised:
            fetched(url, target, "sha256", "0" * 64)
        line = raised.value.said("en")
        assert raised.value.message.id == "err.site.hash"
        assert url in line and _sha256(data) in line and "0" * 64 in line and "\n" not in line
        assert list(target.parent.iterdir()) == []

    def test_an_unreachable_server_is_one_line_naming_the_url(self, tmp_path):
        """A refused connection: ``URL: cannot download: REASON``, exit 2 on the CLI (an InputError)."""
        url = "http://127.0.0.1:9/pyodide.tgz"
        with pytest.raises(InputError) as raised:
            fetched(url, tmp_path / "cache" / "pyodide.tgz", "sha256", "0" * 64)
        assert raised.value.message.id == "err.site.download"
        assert raised.value.said("en").startswith(f"{url}: cannot download: ")
        assert raised.value.said("ja").startswith(f"{url}: ダウンロードできません: ")
        assert list((tmp_path / "cache").iterdir()) == []


class TestTarget:
    def test_a_directory_that_is_not_a_site_is_refused_before_any_download(self, tmp_path, monkeypatch):
        """A DIR with other files and no engine.json: one line, the directory untouched, nothing downloaded."""
        monkeypatch.setattr(downloads, "fetched", lambda *args: pytest.fail("downloaded"))
        (tmp_path / "notes").mkdir()
        (tmp_path / "notes" / "todo.txt").write_text("keep me")
        with pytest.raises(InputError) as raised:
            build_site(tmp_path / "notes", tmp_path / "cache")
        assert raised.value.message.id == "err.site.not_site"
        assert str(tmp_path / "notes") in raised.value.said("en")
        assert [p.name for p in (tmp_path / "notes").iterdir()] == ["todo.txt"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]

    def test_a_file_is_refused(self, tmp_path):
        """DIR naming a file: one line saying what it is."""
        (tmp_path / "site").write_text("")
        with pytest.raises(InputError, match="is a file, not a directory"):
            build_site(tmp_path / "site", tmp_path / "cache")


@pytest.fixture(scope="module")
def wheel() -> tuple[str, bytes]:
    """idemsim's wheel, made once for the module."""
    return idemsim_wheel()


class TestWheel:
    def test_the_bytes_are_the_same_each_time(self, wheel):
        """Sorted entries, fixed dates: the same package gives the same wheel."""
        assert idemsim_wheel() == wheel

    def test_it_holds_the_package_and_the_scenarios(self, wheel):
        """Every file of the package (no caches), the page, the catalogues, and every shipped scenario."""
        name, data = wheel
        assert re.fullmatch(r"idemsim-[^-]+-py3-none-any\.whl", name)
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        assert names == sorted(n for n in names if ".dist-info/" not in n) + [n for n in names if ".dist-info/" in n]
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
        for path in PACKAGE.rglob("*.py"):
            if "__pycache__" not in path.parts:
                assert f"idemsim/{path.relative_to(PACKAGE).as_posix()}" in names
        assert {"idemsim/base/messages/en.json", "idemsim/base/messages/ja.json",
                "idemsim/web/page/engine.js", "idemsim/web/page/worker.js", "idemsim/web/lock.json"} <= set(names)
        for path in scenarios_dir().rglob("*.toml"):
            assert f"idemsim/scenarios/{path.relative_to(scenarios_dir()).as_posix()}" in names

    def test_its_metadata_requires_only_simpy_and_pydantic(self, wheel):
        """METADATA: idemsim's name and version; Requires-Dist on simpy and pydantic, nothing else."""
        name, data = wheel
        archive = zipfile.ZipFile(io.BytesIO(data))
        dist_info = name.removesuffix("-py3-none-any.whl") + ".dist-info"
        metadata = archive.read(f"{dist_info}/METADATA").decode()
        assert "Name: idemsim\n" in metadata and f"Version: {name.split('-')[1]}\n" in metadata
        requires = re.findall(r"^Requires-Dist: ([A-Za-z0-9_.-]+)", metadata, re.M)
        assert sorted(requires) == ["pydantic", "simpy"]
        assert "Tag: py3-none-any\n" in archive.read(f"{dist_info}/WHEEL").decode()

    def test_its_record_gives_each_file_hash_and_size(self, wheel):
        """RECORD lists every entry but itself with its sha256 (urlsafe base64) and size."""
        name, data = wheel
        archive = zipfile.ZipFile(io.BytesIO(data))
        record = name.removesuffix("-py3-none-any.whl") + ".dist-info/RECORD"
        rows = list(csv.reader(io.StringIO(archive.read(record).decode())))
        assert [row[0] for row in rows] == archive.namelist()
        for path, digest, size in rows[:-1]:
            content = archive.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
            assert (digest, size) == (f"sha256={expected}", str(len(content)))
        assert rows[-1] == [record, "", ""]

    @pytest.mark.slow
    def test_pip_installs_it_and_it_runs_a_story(self, wheel, tmp_path):
        """pip install --no-deps of the wheel alone; that idemsim runs lost-response from its own scenarios."""
        name, data = wheel
        (tmp_path / name).write_bytes(data)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                        str(tmp_path / "target"), str(tmp_path / name)], check=True)
        script = ("import idemsim; from idemsim.base.paths import scenarios_dir; "
                  "run = idemsim.run('lost-response'); "
                  "print(idemsim.__file__, scenarios_dir(), run.summary.charges, run.summary.status)")
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        shown = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                               env=environment | {"PYTHONPATH": str(tmp_path / "target")}, check=True).stdout
        target = tmp_path / "target" / "idemsim"
        assert shown.split() == [str(target / "__init__.py"), str(target / "scenarios"), "1", "201"]


def _no_network(error: InputError) -> None:
    """Skip a test that needs the registries when they do not answer; under CI=true, fail."""
    if error.message.id != "err.site.download":
        raise error
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the registries do not answer: {error}")
    pytest.skip(f"the registries do not answer (npm, PyPI): {error}")


@pytest.fixture(scope="session")
def site_cache(tmp_path_factory) -> Path:
    """The download cache of the slow tests: ``$IDEMSIM_CACHE`` when set (offline once filled), else new."""
    chosen = os.environ.get("IDEMSIM_CACHE")
    return Path(chosen) if chosen else tmp_path_factory.mktemp("idemsim-cache")


@pytest.fixture(scope="session")
def site(tmp_path_factory, site_cache) -> Path:
    """A site built once for the session's slow tests."""
    try:
        return build_site(tmp_path_factory.mktemp("built") / "site", site_cache)
    except InputError as error:
        _no_network(error)


def _tree(root: Path) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): _sha256(path.read_bytes())
            for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.slow
class TestSite:
    def test_it_holds_the_page_the_engine_pyodide_and_the_wheels(self, site):
        """The page's files as shipped; engine.json naming Pyodide, the site's lockfile and every wheel."""
        for path in PAGE.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert (site / path.relative_to(PAGE)).read_bytes() == path.read_bytes()
        config = json.loads((site / "engine.json").read_text())
        assert config["engine"] == "pyodide" and config["pyodide"] == "pyodide/"
        assert config["lock"] == "wheels/pyodide-lock.json"
        assert config["wheels"] == [f"wheels/{entry['file']}" for entry in lock()["wheels"]] + [
            f"wheels/{idemsim_wheel()[0]}"]
        assert sorted(p.name for p in (site / "pyodide").iterdir()) == sorted(lock()["pyodide"]["files"])
        fetched_files = [site / "pyodide" / name for name in config["fetch"]] + [site / w for w in config["wheels"]]
        assert {"pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip"} <= set(config["fetch"])
        assert config["bytes"] == sum(path.stat().st_size for path in fetched_files)
        for entry in lock()["wheels"]:
            assert _sha256((site / "wheels" / entry["file"]).read_bytes()) == entry["sha256"]
        assert (site / "wheels" / idemsim_wheel()[0]).read_bytes() == idemsim_wheel()[1]

    def test_the_cache_holds_the_locked_sizes_and_a_full_cache_needs_no_download(self, site, site_cache):
        """Each cached file has the lockfile's size (the progress bar's total), and nothing is missing now."""
        web = cache_dir(site_cache)
        assert (web / Path(lock()["pyodide"]["url"]).name).stat().st_size == lock()["pyodide"]["size"]
        for entry in lock()["wheels"]:
            assert (web / entry["file"]).stat().st_size == entry["size"]
        assert downloads.missing_bytes(site_cache) == 0

    def test_the_pyodide_files_are_the_locked_package_s(self, site, site_cache):
        """Each file of pyodide/ is that file of the npm tarball whose sha512 is the lock's integrity."""
        tarball = cache_dir(site_cache) / Path(lock()["pyodide"]["url"]).name
        algorithm, expected = integrity_hex(lock()["pyodide"]["integrity"])
        assert hashlib.new(algorithm, tarball.read_bytes()).hexdigest() == expected
        with tarfile.open(tarball) as package:
            for name in lock()["pyodide"]["files"]:
                assert (site / "pyodide" / name).read_bytes() == package.extractfile(f"package/{name}").read()
            info = json.load(package.extractfile("package/pyodide-lock.json"))["info"]
        assert info["abi_version"] == lock()["pyodide"]["abi"]
        assert info["python"].startswith(lock()["pyodide"]["python"] + ".")

    def test_its_pyodide_lockfile_names_exactly_the_wheels(self, site):
        """wheels/pyodide-lock.json: Pyodide's info, and each wheel of the site with its sha256 and depends."""
        packaged = json.loads((site / "wheels" / "pyodide-lock.json").read_text())
        assert packaged["info"]["abi_version"] == lock()["pyodide"]["abi"]
        files = sorted(p.name for p in (site / "wheels").iterdir() if p.suffix == ".whl")
        assert sorted(entry["file_name"] for entry in packaged["packages"].values()) == files
        for key, entry in packaged["packages"].items():
            assert _sha256((site / "wheels" / entry["file_name"]).read_bytes()) == entry["sha256"]
            assert set(entry["depends"]) <= set(packaged["packages"]), key
        assert packaged["packages"]["idemsim"]["depends"] == ["simpy", "pydantic"]

    def test_each_wheel_s_metadata_agrees_with_the_lock(self, site):
        """Its Requires-Dist (without extras) is the lock's depends; pydantic's pins the locked pydantic-core."""
        for entry in lock()["wheels"]:
            archive = zipfile.ZipFile(site / "wheels" / entry["file"])
            metadata = next(archive.read(n).decode() for n in archive.namelist()
                            if n.endswith(".dist-info/METADATA"))
            requires = [line for line in re.findall(r"^Requires-Dist: (.*)$", metadata, re.M) if "extra" not in line]
            names = {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", r)[0]).lower() for r in requires}
            assert names == set(entry["depends"]), entry["name"]
            assert re.search(rf"^Version: {re.escape(entry['version'])}$", metadata, re.M)
            if entry["name"] == "pydantic":
                assert f"pydantic-core=={WHEELS['pydantic-core']['version']}" in requires

    def test_it_holds_the_catalogs_and_every_default_story(self, site):
        """catalog.LANG.json and stories/SCENARIO.LANG.json: the engine's answers, for every shipped story."""
        for lang in LANGS:
            assert json.loads((site / f"catalog.{lang}.json").read_text()) == engine.catalog(lang)
        names = builtin_names()
        assert sorted(p.name for p in (site / "stories").iterdir()) == sorted(
            f"{name}.{lang}.json" for name in names for lang in LANGS)
        for lang in LANGS:
            assert json.loads((site / "stories" / f"lost-response.{lang}.json").read_text()) == engine.answer(
                {"scenario": "lost-response", "lang": lang})

    def test_the_page_s_own_scripts_name_no_other_host(self, site):
        """engine.js and worker.js load everything from the site itself: no URL of another host."""
        for name in ("engine.js", "worker.js", "engine.json", "wheels/pyodide-lock.json"):
            assert not re.search(r"https?://", (site / name).read_text()), name

    def test_a_rebuild_replaces_the_site_with_the_same_bytes_and_refetches_a_corrupted_file(self, site,
                                                                                               site_cache):
        """Building over the earlier site: allowed, atomic, the same files byte for byte, no temporary directory
        left; a cached wheel damaged in between is downloaded again."""
        before = _tree(site)
        cached = cache_dir(site_cache) / WHEELS["simpy"]["file"]
        cached.write_bytes(b"damaged")
        (site / "stale.txt").write_text("from an older build")
        assert downloads.missing_bytes(site_cache) == WHEELS["simpy"]["size"]
        told = []
        try:
            build_site(site, site_cache, progress=lambda done, total: told.append((done, total)))
        except InputError as error:
            _no_network(error)
        assert told[0] == (0, WHEELS["simpy"]["size"]) and told[-1] == (WHEELS["simpy"]["size"],) * 2
        assert _tree(site) == before
        assert _sha256(cached.read_bytes()) == WHEELS["simpy"]["sha256"]
        assert sorted(p.name for p in site.parent.iterdir()) == ["site"]
