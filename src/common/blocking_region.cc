#include "common/blocking_region.h"

namespace abacus {
namespace {

thread_local BlockingRegion::Pool* t_pool = nullptr;

}  // namespace

void BlockingRegion::Join(Pool* pool) { t_pool = pool; }

BlockingRegion::BlockingRegion() : pool_(t_pool) {
  if (pool_ != nullptr) pool_->Blocked();
}

BlockingRegion::~BlockingRegion() {
  if (pool_ != nullptr) pool_->Unblocked();
}

}  // namespace abacus
