#!/bin/sh
# Renders the documentation site from the Markdown (doc/index.md -> index.html,
# the home page; README.md -> readme.html; doc/NAME.md -> NAME.html) into OUTDIR with pandoc (Debian package pandoc;
# scripts/install-deps.sh --doc installs it), with doc/site/'s template,
# stylesheet, navigation and link filter. The pages link the examples as
# ../examples/NAME.lua: put them beside OUTDIR (make doc and make install do).
#   scripts/build-doc.sh OUTDIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/build-doc.sh OUTDIR}
PANDOC=${PANDOC:-pandoc}
command -v "$PANDOC" > /dev/null 2>&1 || {
	echo "build-doc: '$PANDOC' not found: install the Debian package pandoc (scripts/install-deps.sh --doc)" >&2
	exit 1
}
mkdir -p "$out"
cp "$top/doc/site/style.css" "$out/style.css"
# The pictures the pages show (doc/img/, made by scripts/check-trace-html.sh --images).
mkdir -p "$out/img"
cp "$top"/doc/img/*.png "$out/img/"
for f in "$top/README.md" "$top"/doc/*.md; do
	case $f in
	*/README.md) page=readme.html ;;
	*) page=$(basename "$f" .md).html ;;
	esac
	# (cd: the filter reads the input's path relative to the top.)
	(cd "$top" && "$PANDOC" --from gfm --to html5 --standalone --toc --toc-depth 2 \
		--template doc/site/template.html --lua-filter doc/site/site.lua \
		--highlight-style pygments "${f#"$top"/}") > "$out/$page.tmp"
	mv "$out/$page.tmp" "$out/$page"
	echo "  PANDOC   $out/$page"
done
