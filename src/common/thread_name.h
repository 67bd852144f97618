// Names the calling thread (at most 15 characters shown), so that `top -H`, `ps -L` and perf
// tell the scheduling loop, the committer and the audit writer apart from HTTP workers.
#pragma once

namespace abacus {

// Sets the calling thread's name; longer names are cut to 15 characters. Never fails loudly.
void NameThisThread(const char* name);

}  // namespace abacus
