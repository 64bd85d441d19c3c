"""The zip of Icebatch's code a cluster session ships to executors (workers/spark/shipping)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from app.config import Settings
from workers.spark import shipping
from workers.spark.session import cluster_conf, on_cluster


def test_the_zip_holds_every_source_and_is_named_by_its_content(tmp_path: Path) -> None:
    first = shipping.build(tmp_path / "out")
    assert shipping.build(tmp_path / "out") == first  # the same sources: the same file
    names = set(zipfile.ZipFile(first).namelist())
    expected = {str(p) for p in shipping.sources()}
    assert names == expected
    assert {"app/lake/rewrite_files.py", "workers/spark/tasks.py", "workers/cdc/fold.py"} <= names
    assert not any("__pycache__" in n or not n.endswith(".py") for n in names)

    copy = tmp_path / "src"
    for package in shipping.PACKAGES:
        shutil.copytree(shipping.ROOT / package, copy / package)
    assert shipping.build(tmp_path / "out", root=copy).name == first.name
    (copy / "app" / "failpoints.py").write_text("RAISE = 1\n")
    changed = shipping.build(tmp_path / "out", root=copy)
    assert changed.name != first.name  # another version of the code: another name


def test_an_interpreter_without_icebatch_imports_it_from_the_zip(tmp_path: Path) -> None:
    shipped = shipping.build(tmp_path)
    # -I -S: no site-packages, no editable install, no current folder; only the zip
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "import app.failpoints as f; print(f.__file__)",
            str(shipped),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert done.stdout.strip() == f"{shipped}/app/failpoints.py"


def test_cluster_settings_reach_the_session_only_on_a_cluster() -> None:
    local = Settings(spark_master="local[2]")
    assert not on_cluster(local)
    cluster = Settings(
        spark_master="spark://10.0.0.1:7077",
        spark_driver_host="10.0.0.2",
        spark_executor_memory="2g",
        spark_executor_cores=2,
        spark_cores_max=4,
        spark_java_options="-XX:+UseSerialGC",
    )
    assert on_cluster(cluster)
    assert cluster_conf(cluster) == {
        "spark.executor.memory": "2g",
        "spark.executor.cores": "2",
        "spark.cores.max": "4",
        "spark.driver.host": "10.0.0.2",
        "spark.executor.extraJavaOptions": "-XX:+UseSerialGC",
    }
    assert "spark.cores.max" not in cluster_conf(Settings(spark_master="yarn"))
