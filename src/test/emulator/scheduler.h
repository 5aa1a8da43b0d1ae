// Running a launch: blocks spread over a pool of worker threads, each block's threads as fibers on one worker.
#pragma once
#include "api.h"
#include "worker.h"

namespace emu {

// Runs every block of the launch and returns when all have finished (or one failed): CUDA_SUCCESS or the
// execution error, which has already been reported on stderr.
CUresult execute(Launch& launch);

// Runs one block on the calling worker; false (with w->error and w->message set) on an execution error.
bool run_block(Worker* w, Launch& launch, uint64_t linearBlockIndex);

}  // namespace emu
