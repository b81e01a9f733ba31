#!/usr/bin/env bash
# Builds edgecms, fills a demo instance and runs the whole service on it.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/edgecms ./cmd/edgecms
guid=${EDGECMS_DEMO_GUID:-demo}
addr=${EDGECMS_ADDR:-127.0.0.1:8080}
creds=$(bin/edgecms demo --guid "$guid")
field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" <<<"$creds"; }
cat <<MSG

edgecms is starting on http://$addr with the demo instance "$guid".

  Studio:           http://$addr/studio/
    email:          $(field email)
    password:       $(field password)

  management token: $(field managementToken)
  fetch key:        $(field fetchKey)
  preview key:      $(field previewKey)

Try:
  curl -H 'APIKey: $(field fetchKey)' http://$addr/$guid/fetch/en-us/sitemap/flat/website
  curl -H 'Authorization: Bearer $(field managementToken)' http://$addr/api/v1/instance/$guid/models

MSG
exec bin/edgecms serve
