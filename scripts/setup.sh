#!/usr/bin/env bash
# One-command setup: system packages (Java 17, Jackson, jarjar, JDBC drivers, Chromium), the Iceberg Spark
# runtime jar with its Jackson relocated (DESIGN.md §2), and a virtualenv with the pinned packages.
# Idempotent: a second run only checks. Used by README, .ci/run and the Dockerfile alike.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ICEBATCH_VENV:-$ROOT/.venv}"
JARS="$ROOT/build/jars"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/icebatch/jars"   # built once per machine, reused by clones
ICEBERG_DEPS_VERSION="1.0.3"          # snowpark-connect-deps-iceberg: ships iceberg-spark-runtime 1.10.2
RUNTIME_JAR="iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
PYTHON="${PYTHON:-python3}"
# uv installs the pinned packages: the same set as pip (constraints.txt), in half the time (a
# clean clone's install: 92 s with pip, 50 s with uv on the 2-core machine). Compiled to
# bytecode as pip does: where PYTHONDONTWRITEBYTECODE is set (CI's machine), a package left
# uncompiled is compiled again by every process that imports it (an API process: 5.6 -> 9.2 s)
UV_VERSION="0.13.9"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

apt_packages=(libjackson2-core-java libjackson2-databind-java libjackson2-annotations-java
              libjarjar-java libxerial-sqlite-jdbc-java libpostgresql-jdbc-java unzip zip)
# chromium: the web UI's browser tests (Playwright drives it); an image that runs the product
# and not its tests skips it with ICEBATCH_SETUP_BROWSER=0
if [ "${ICEBATCH_SETUP_BROWSER:-1}" != "0" ]; then
  apt_packages+=(chromium)
fi
if ! java -version 2>&1 | grep -q 'version "17'; then
  apt_packages+=(openjdk-17-jre-headless)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

mkdir -p "$JARS" "$CACHE"
if [ ! -f "$CACHE/$RUNTIME_JAR" ] || [ ! -f "$CACHE/iceberg-shaded-jackson.jar" ]; then
  say "building the Iceberg Spark runtime with relocated Jackson"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  "$PYTHON" -m pip download --quiet --no-deps --dest "$work" \
    "snowpark-connect-deps-iceberg==$ICEBERG_DEPS_VERSION"
  unzip -q -o -j "$work"/snowpark_connect_deps_iceberg-*.whl \
    "snowpark_connect_deps_iceberg/jars/$RUNTIME_JAR" -d "$work"
  mkdir -p "$work/jackson"
  for j in jackson-core jackson-databind jackson-annotations; do
    unzip -q -o "/usr/share/java/$j.jar" -d "$work/jackson"
  done
  rm -rf "$work/jackson/META-INF" "$work/jackson/module-info.class"
  (cd "$work/jackson" && zip -q -r "$work/jackson-all.jar" .)
  echo 'rule com.fasterxml.jackson.** org.apache.iceberg.shaded.com.fasterxml.jackson.@1' >"$work/rules.txt"
  java -jar /usr/share/java/jarjar.jar process "$work/rules.txt" "$work/jackson-all.jar" \
    "$work/iceberg-shaded-jackson.jar"
  cp "$work/$RUNTIME_JAR" "$work/iceberg-shaded-jackson.jar" "$CACHE/"
fi
cp -f "$CACHE/$RUNTIME_JAR" "$CACHE/iceberg-shaded-jackson.jar" "$JARS/"
for j in sqlite-jdbc postgresql; do
  ln -sf "/usr/share/java/$j.jar" "$JARS/$j.jar"
done

if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtualenv $VENV"
  "$PYTHON" -m venv "$VENV"
fi
say "installing Python packages (pinned in pyproject.toml)"
log="$(mktemp)"
# constraints.txt pins every transitive package too (regenerate: pip freeze --exclude-editable)
# the SDK (clients/python, its own distribution) first: the CLI of the main package uses it
if ! "$VENV/bin/uv" --version 2>/dev/null | grep -q "^uv $UV_VERSION\b"; then
  "$VENV/bin/python" -m pip install --quiet "uv==$UV_VERSION" >"$log" 2>&1 || { cat "$log"; exit 1; }
fi
if ! "$VENV/bin/uv" pip install --quiet --compile-bytecode --python "$VENV/bin/python" \
  -c "$ROOT/constraints.txt" \
  -e "$ROOT/clients/python" -e "$ROOT[dev]" >"$log" 2>&1
then
  cat "$log"; rm -f "$log"; exit 1
fi
rm -f "$log"
# Redocly CLI, pinned by tools/redocly/package-lock.json: lints the OpenAPI document in the tests
REDOCLY="$ROOT/tools/redocly"
if ! command -v npm >/dev/null 2>&1; then
  say "npm not found: skipping the OpenAPI linter (tests/app/test_openapi.py needs it)"
elif ! cmp -s "$REDOCLY/package-lock.json" "$REDOCLY/node_modules/.icebatch-installed-lock"; then
  say "installing the OpenAPI linter (Redocly CLI, pinned in tools/redocly)"
  (cd "$REDOCLY" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
  cp "$REDOCLY/package-lock.json" "$REDOCLY/node_modules/.icebatch-installed-lock"
fi
"$VENV/bin/python" -c "import app, workers, pyspark, pyiceberg, icebatch_client" # fail here, not in tests
say "ready: activate with 'source .venv/bin/activate', then 'icebatch up' or 'make test'"
