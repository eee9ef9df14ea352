#pragma once
// The item roles the workbench's models share, so a view or proxy can ask any of them for a node.
#include <Qt>

namespace kf::ui {

enum Role {
    NodeIdRole = Qt::UserRole + 1, // qint64: the session node behind the row (0 for none)
    KindRole,                      // QString: "round", "idea", "candidate"
    StatusRole,                    // QString: the stored status ("correct", "compile error", ...)
    TimeRole,                      // double: median ms of a correct candidate, 0 otherwise
    SpeedupRole,                   // double: eager / median, 0 when unknown
    FloorPercentRole,              // double: floor / median × 100, 0 when unknown
    EditedRole,                    // bool: written by hand
    BestPathRole,                  // bool: the best kernel or one of its ancestors
    SortRole,                      // a number or text that sorts the column as people expect
    RoundRole,                     // int
    SanitizerUncheckedRole,        // bool: compute-sanitizer ran but could not judge the kernel
    ParamsRole,                    // QString: all of a candidate's parameters ("BLOCK=512 · VEC=4")
};

} // namespace kf::ui
