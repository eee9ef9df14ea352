#pragma once
// The Help menu's texts: About (the versions of what the workbench runs on: Qt here, and CUDA
// and libtorch as the worker reports them) and the keyboard shortcuts, read from the actions
// themselves so that the list is always the one in use.
#include "engine_jobs.h"

#include <QList>
#include <QString>

class QAction;

namespace kf::ui {

// "12.4" from cudaRuntimeGetVersion's 12040; "" for 0.
QString cudaVersionText(int version);
QString aboutText(const GpuStatus &);
// A table of every action with a shortcut: what it does and its keys.
QString shortcutsText(const QList<QAction *> &);

} // namespace kf::ui
