#pragma once
// The worker process's entry point (no libtorch in this header). See docs/protocol.md.
namespace kf {
// argv: [--compile] — compile-only mode speaks only hello and compile, and never starts libtorch.
int runWorker(int argc, char **argv);
} // namespace kf
