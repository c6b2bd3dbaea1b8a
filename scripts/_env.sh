# Sourced by scripts/main, scripts/test and .ci/run: where the public data sets are.
# $TURNSCOPE_DATA wins; else ../shared/data next to this checkout; else, for a clone of a
# local checkout (git clone . /tmp/x), the shared/data next to the checkout it came from.
if [ -z "${TURNSCOPE_DATA:-}" ]; then
  if [ -d ../shared/data ]; then
    TURNSCOPE_DATA="$(cd ../shared/data && pwd)"
  else
    origin="$(git config --get remote.origin.url 2>/dev/null || true)"
    if [ -n "$origin" ] && [ -d "$origin/../shared/data" ]; then
      TURNSCOPE_DATA="$(cd "$origin/../shared/data" && pwd)"
    fi
  fi
fi
if [ -n "${TURNSCOPE_DATA:-}" ]; then
  export TURNSCOPE_DATA
fi
# OpenMP's idle threads (e5, LightGBM) spin by default; on two shared cores that made an
# embedding twenty times slower in the test suite's in-process sessions. The CLI sets the
# same for its commands (turnscope.cli.main)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
