#include "model/line_diff.h"

#include <QStringList>

#include <vector>

namespace kf::ui {

namespace {

struct Op {
    char kind; // ' ', '-', '+'
    int a, b;  // line indices in from / to (-1 where none)
};

std::vector<Op> lcsOps(const QStringList &a, const QStringList &b)
{
    // Common prefix and suffix first: edits are usually local.
    int pre = 0;
    while (pre < a.size() && pre < b.size() && a[pre] == b[pre])
        ++pre;
    int suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
        ++suf;
    const int n = int(a.size()) - pre - suf, m = int(b.size()) - pre - suf;
    std::vector<Op> ops;
    for (int i = 0; i < pre; ++i)
        ops.push_back({' ', i, i});
    if (qint64(n) * m <= 4'000'000) {
        std::vector<std::vector<int>> l(std::size_t(n + 1), std::vector<int>(std::size_t(m + 1), 0));
        for (int i = n - 1; i >= 0; --i)
            for (int j = m - 1; j >= 0; --j)
                l[i][j] = a[pre + i] == b[pre + j] ? l[i + 1][j + 1] + 1 : std::max(l[i + 1][j], l[i][j + 1]);
        int i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && a[pre + i] == b[pre + j]) {
                ops.push_back({' ', pre + i++, pre + j++});
            } else if (i < n && (j == m || l[i + 1][j] >= l[i][j + 1])) {
                ops.push_back({'-', pre + i++, -1}); // removals first, as diff(1) prints them
            } else {
                ops.push_back({'+', -1, pre + j++});
            }
        }
    } else {
        for (int i = 0; i < n; ++i)
            ops.push_back({'-', pre + i, -1});
        for (int j = 0; j < m; ++j)
            ops.push_back({'+', -1, pre + j});
    }
    for (int k = 0; k < suf; ++k)
        ops.push_back({' ', int(a.size()) - suf + k, int(b.size()) - suf + k});
    return ops;
}

} // namespace

QString unifiedDiff(const QString &from, const QString &to, const QString &fromName, const QString &toName, int context)
{
    const QStringList a = from.split(QLatin1Char('\n')), b = to.split(QLatin1Char('\n'));
    const std::vector<Op> ops = lcsOps(a, b);
    QString out;
    std::size_t k = 0;
    while (k < ops.size()) {
        if (ops[k].kind == ' ') {
            ++k;
            continue;
        }
        // A hunk: from `context` lines before this change to `context` lines after the last
        // change that is at most 2 × context lines away.
        std::size_t start = k >= std::size_t(context) ? k - std::size_t(context) : 0, end = k;
        for (std::size_t j = k; j < ops.size(); ++j)
            if (ops[j].kind != ' ') {
                if (j > end + 2 * std::size_t(context))
                    break;
                end = j;
            }
        end = std::min(ops.size() - 1, end + std::size_t(context));
        int aStart = -1, bStart = -1, aCount = 0, bCount = 0;
        QString body;
        for (std::size_t j = start; j <= end; ++j) {
            const Op &o = ops[j];
            if (o.a >= 0) {
                if (aStart < 0)
                    aStart = o.a;
                ++aCount;
            }
            if (o.b >= 0) {
                if (bStart < 0)
                    bStart = o.b;
                ++bCount;
            }
            body += QLatin1Char(o.kind) + (o.kind == '+' ? b[o.b] : a[o.a]) + QLatin1Char('\n');
        }
        if (out.isEmpty())
            out = QStringLiteral("--- %1\n+++ %2\n").arg(fromName, toName);
        out += QStringLiteral("@@ -%1,%2 +%3,%4 @@\n").arg(aStart + 1).arg(aCount).arg(bStart + 1).arg(bCount) + body;
        k = end + 1;
    }
    return out;
}

} // namespace kf::ui
