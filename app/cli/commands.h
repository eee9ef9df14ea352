#pragma once
#include "args.h"

namespace kf::cli {

// Exit codes (README): 0 success, 1 judged and not correct, 2 bad usage or input,
// 3 no usable GPU, 4 the worker failed, 5 the language model's server failed.
enum Exit { Success = 0, NotCorrect = 1, BadInput = 2, NoGpu = 3, WorkerFailed = 4, GeneratorFailed = 5 };

int cmdProblems(const Args &);
int cmdShow(const Args &);
int cmdBaseline(const Args &);
int cmdEval(const Args &);
int cmdExport(const Args &);

} // namespace kf::cli
