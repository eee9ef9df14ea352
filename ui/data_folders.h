#pragma once
// Where the workbench finds what ships with it, wherever it is started from: next to the
// installed executable (<prefix>/share/kernelforge/...), in the source tree it was built from,
// or where an environment variable says.
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace kf::ui {

// Folders of the example sessions: KERNELFORGE_EXAMPLES, <exe>/../share/kernelforge/examples and
// the source tree's resources/examples.
QStringList exampleFolders();
bool isShippedExample(const QString &path);

// Folders that may hold the shipped problems, in order: those of problemSearchPath()
// (KERNELFORGE_PROBLEMS, <exe>/../share/kernelforge/problems, a checkout above the working
// folder) and the source tree's problems/, found as the examples are.
std::vector<std::string> shippedProblemFolders();

// A page of the documentation ("README.md", "gui.md"): in <exe>/../share/doc/kernelforge, else in
// the source tree (the README at its top, the rest in docs/); "" when it is in neither.
QString documentationFile(const QString &name);

} // namespace kf::ui
