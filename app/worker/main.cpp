// kernelforge-worker: owns libtorch and the GPU; speaks docs/protocol.md over stdin/stdout.
#include "reference/worker.h"

int main(int argc, char **argv) { return kf::runWorker(argc, argv); }
