#!/usr/bin/env bash
# Checks that the per-thread request context stays in the HTTP layer (issue 22; docs/architecture.md
# "Known debts" 1): scripts/check-request-context.sh
#
# The HTTP layer keeps the request a thread serves in `t_request` (src/server/request_thread.h)
# and passes it down explicitly; ControlPlane, Governance, SecretVault, the ledger, the committer
# and the controllers take a `RequestContext*` and never read thread state. This check fails
# when a file outside the HTTP layer names the thread's request (t_request, CurrentRequest(),
# RequestPrincipal(), RequestWorkloadId(), the filters of request_authorization.h) or includes
# the headers that expose it, and when the thread-carried audit entry of old
# (CurrentRequestAudit, CarryRequestAudit, t_carried_audit) comes back anywhere.
# `make test` runs it as the ctest request_context_boundary.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The HTTP layer: pre- and post-routing, the route table and its handlers, the request reader and
# the answer writer.
is_http_layer() {
  case "$1" in
    src/server/request_thread.h | src/server/request_thread.cc) return 0 ;;
    src/server/request_authorization.h | src/server/request_authorization.cc) return 0 ;;
    src/server/route_table.h | src/server/route_table.cc) return 0 ;;
    src/server/governance_api.h | src/server/governance_api.cc) return 0 ;;
    src/server/http_server.h | src/server/http_server.cc | src/server/http_answer.cc) return 0 ;;
    src/server/http_request.h | src/server/http_request.cc) return 0 ;;  # what a handler reads from a request
    src/server/workload_update_api.cc) return 1 ;;  # ControlPlane::UpdateWorkload: core, no handler
    src/server/*_api.cc | src/server/*_api.h) return 0 ;;
  esac
  return 1
}

thread_names='\bt_request\b|\bCurrentRequest\(|\bRequestPrincipal\(|\bRequestWorkloadId\(|\bRequestNode\(|\bRequestWorkloadFilter\(|\bRequestReportTenants\(|\bFilterVisibleConfig\(|\bVisibleConfig\(|#include "server/(request_thread|request_authorization|governance_api)\.h"'
gone_names='\bCurrentRequestAudit\b|\bCarryRequestAudit\b|\bt_carried_audit\b'

# The check must see the HTTP layer's own reads, or a clean run proves nothing.
if ! grep -qE "$thread_names" src/server/request_thread.cc src/server/governance_api.cc; then
  echo "check-request-context: the patterns no longer find t_request in the HTTP layer: fix this script" >&2
  exit 1
fi

failed=0
while IFS= read -r file; do
  case "$file" in *_test.cc) continue ;; esac
  if ! is_http_layer "$file"; then
    if hits=$(grep -nE "$thread_names" "$file"); then
      echo "$file reads the HTTP thread's request below the HTTP layer (pass a RequestContext* instead):" >&2
      echo "$hits" | sed 's/^/  /' >&2
      failed=1
    fi
  fi
  if hits=$(grep -nE "$gone_names" "$file"); then
    echo "$file names the thread-carried audit entry (pass the PendingRequestAudit to the command):" >&2
    echo "$hits" | sed 's/^/  /' >&2
    failed=1
  fi
done < <(find src bench -name '*.cc' -o -name '*.h' | sort)

if [ "$failed" -eq 0 ]; then echo "check-request-context: no thread-local request state below the HTTP layer"; fi
exit "$failed"
