#include "common/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace abacus {

void NameThisThread(const char* name) {
  std::string cut(name, std::min<size_t>(std::strlen(name), 15));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace abacus
