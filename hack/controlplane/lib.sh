# Shared by the build-*.sh scripts: where built binaries live and how a build is made atomic.
# Source it; it defines no side effects beyond functions and a few variables.

# The script's own arguments, for make_work_dir's restart under the build lock (sourcing without
# arguments leaves the script's positional parameters in place).
script_arguments=("$@")
script_path="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"

# Versions: each defaults to versions.env, and an environment variable of the same name wins.
while IFS='=' read -r name value; do
  [[ "$name" =~ ^[A-Z_]+$ ]] || continue
  [[ -n "${!name:-}" ]] || declare "$name=$value"
done < "$(dirname "${BASH_SOURCE[0]}")/versions.env"

# matrix_column N -> each version column N of MATRIX_ROWS names (1 Crossplane, 2 Kubernetes,
# 3 provider-kubernetes), once, in the rows' order: what the build scripts build.
matrix_column() {
  local row seen=" "
  IFS=, read -r -a rows <<<"$MATRIX_ROWS"
  for row in "${rows[@]}"; do
    local value
    value="$(cut -d/ -f"$1" <<<"$row")"
    [[ -n "$value" ]] || { echo "versions.env: MATRIX_ROWS row '$row' has no column $1" >&2; return 1; }
    [[ "$seen" == *" $value "* ]] && continue
    seen+="$value "
    echo "$value"
  done
}

# etcd_for KUBERNETES -> the etcd release ETCD_FOR_KUBERNETES pairs with that Kubernetes.
etcd_for() {
  local pair
  IFS=, read -r -a pairs <<<"$ETCD_FOR_KUBERNETES"
  for pair in "${pairs[@]}"; do
    [[ "${pair%%:*}" == "$1" ]] && { echo "${pair#*:}"; return 0; }
  done
  echo "versions.env: ETCD_FOR_KUBERNETES names no etcd for Kubernetes $1" >&2
  return 1
}

# Outside the clone so `git clean` and fresh clones reuse the binaries; keyed by version below.
cache_root="${FIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/function-inference-clusters}"
bin_root="$cache_root/bin"

# component_dir NAME VERSION -> the directory that holds that version's binary.
component_dir() {
  echo "$bin_root/$1-$2"
}

# is_cached NAME VERSION BINARY -> success when that binary was fully built before.
# A binary only ever appears under its final name through `mv`, so its presence is the proof.
is_cached() {
  [[ -x "$(component_dir "$1" "$2")/$3" ]]
}

# install_atomically SOURCE DEST -> moves a finished build into place; an interrupted build
# leaves only a temp name behind, never a file that looks cached.
install_atomically() {
  local source="$1" dest="$2"
  mkdir -p "$(dirname "$dest")"
  cp "$source" "$dest.tmp.$$"
  mv -f "$dest.tmp.$$" "$dest"
}

# install_crds_atomically SOURCE_DIR DEST_DIR -> a provider's CRDs beside its binary, replaced
# whole, so a cached folder is never half old, half new.
install_crds_atomically() {
  local source="$1" dest="$2"
  rm -rf "$dest.tmp.$$"
  mkdir -p "$(dirname "$dest")"
  cp -r "$source" "$dest.tmp.$$"
  rm -rf "$dest"
  mv "$dest.tmp.$$" "$dest"
}

# The linker flags every build here adds: no symbol table, no DWARF. Nothing debugs these
# binaries (a panic's trace keeps its function names), and writing the debug info is half of
# each link: kube-apiserver links in 13 s with it, 7 s without.
strip_ldflags="-s -w"

# The compiler and linker collect garbage a quarter as often: Crossplane v2.1.0 builds from an
# empty build cache in 169 s instead of 198 s (260 s of CPU instead of 303 s), its largest
# process at 1.3 GB instead of 1.2 GB; the machine has memory to spare, not CPU. GOGC=off was
# hardly faster (164 s). A caller's own GOGC wins.
export GOGC="${GOGC:-400}"
# Every go command here: the throwaway modules' go.mod is filled from the module proxy
# (-mod=mod), and nothing is compiled with DWARF, which -w threw away at link time anyway
# (Crossplane v2.1.0 from an empty build cache: 151 s instead of 169 s at GOGC=400).
export GOFLAGS="-mod=mod -gcflags=all=-dwarf=false"

# make_work_dir -> sets $work to a fresh temp directory removed when the script exits.
# (It sets a variable rather than printing: a trap set inside $(...) would fire at once.)
# Every build starts here, so this is where a script takes the build lock: .ci/run builds the
# control plane in the background while make test asks for its own tools, and two Go builds at
# once on 2 cores only thrash (or build the same binary twice). Without the lock the script
# starts again under it (flock waits for any other build), so its cache checks see whatever the
# build it waited for has just installed.
make_work_dir() {
  if [[ -z "${FIC_BUILD_LOCK_HELD:-}" ]]; then
    mkdir -p "$cache_root"
    log "taking the build lock ($cache_root/build.lock; waits while another build holds it)"
    FIC_BUILD_LOCK_HELD=1 exec flock "$cache_root/build.lock" bash "$script_path" "${script_arguments[@]}"
  fi
  work="$(mktemp -d)"
  # shellcheck disable=SC2064 # expand now: the trap must remove this very directory.
  trap "chmod -R u+w '$work' 2>/dev/null; rm -rf '$work'" EXIT
}

# throwaway_module -> sets $work to a temp directory holding an empty go.mod.
throwaway_module() {
  make_work_dir
  printf 'module build\n\ngo 1.25\n' > "$work/go.mod"
}

# writable_module_copy MODULE@VERSION -> sets $work to a writable copy of that module's source
# (the module cache is read-only, and building a module's own main packages may update go.sum).
writable_module_copy() {
  local source
  source="$(module_dir "$1")" || return 1
  make_work_dir
  cp -r "$source/." "$work/"
  chmod -R u+w "$work"
}

# module_dir MODULE@VERSION -> prints the module cache folder holding that version's source;
# fails naming the module and version when the Go module proxy refuses it.
module_dir() {
  local answer
  answer="$(go mod download -json "$1" 2>&1)" || true
  local dir
  dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$answer")"
  if [[ -z "$dir" ]]; then
    echo "the Go module proxy does not serve $1:" >&2
    # The proxy's answer arrives JSON-escaped: one line, its own line breaks as \n\t.
    sed -n 's/^[[:space:]]*"Error": "\(.*\)"$/  \1/p' <<<"$answer" | sed 's/\\n\\t/; /g' >&2
    return 1
  fi
  echo "$dir"
}

# go_explained ARGS... -> runs `go ARGS` with the module proxy allowed to fill go.mod; when it
# fails because the proxy refuses a dependency, says which module and version, once, at the end.
go_explained() {
  local output status=0
  output="$(mktemp)"
  go "$@" 2>"$output" || status=$?
  cat "$output" >&2
  if ((status != 0)); then
    # Go reports a refused module as `MODULE@VERSION: reading https://proxy…: 403 Forbidden`
    # (404/410 for one the proxy has never had).
    grep -oE '[^[:space:]:]+@v[^[:space:]:]+: reading [^[:space:]]+: (403|404|410)' "$output" \
      | sed -E 's/^([^:]+): reading .*: ([0-9]+)$/the Go module proxy refuses \1 (HTTP \2)/' \
      | sort -u >&2 || true
  fi
  rm -f "$output"
  return "$status"
}

log() {
  echo "$(basename "$0"): $*" >&2
}
