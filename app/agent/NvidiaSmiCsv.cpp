#include "NvidiaSmiCsv.h"

#include <cerrno>
#include <cstdlib>

namespace ty::agent {

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool isMissing(std::string_view v)
{
    return v.empty() || v == "[N/A]" || v == "N/A" || v == "[Not Supported]" || v == "Not Supported"
            || v == "[Unknown Error]" || v == "[Insufficient Permissions]";
}

// "143771 MiB" -> 143771, "79.50 W" -> 79.5, "0 %" -> 0. Error text on garbage.
std::expected<std::optional<double>, std::string> number(std::string_view v)
{
    v = trim(v);
    if (isMissing(v))
        return std::optional<double>{};
    for (std::string_view unit : {" MiB", " %", " W", " MHz", " C"}) {
        if (v.size() > unit.size() && v.substr(v.size() - unit.size()) == unit) {
            v.remove_suffix(unit.size());
            break;
        }
    }
    const std::string s(trim(v));
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
        return std::unexpected("not a number: '" + s + "'");
    return std::optional<double>(d);
}

std::string headerName(std::string_view h)
{
    h = trim(h);
    if (const auto br = h.find(" ["); br != std::string_view::npos)
        h = h.substr(0, br);
    return std::string(h);
}

// Field names as nvidia-smi prints them in a header differ from the query
// names only by unit brackets, except for a few aliases.
std::string canonicalField(const std::string& f)
{
    if (f == "pci.bus_id" || f == "pci.busid")
        return "pci.bus_id";
    if (f == "used_memory")
        return "used_gpu_memory";
    return f;
}

std::vector<std::string_view> lines(std::string_view text)
{
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto nl = text.find('\n', pos);
        const auto end = nl == std::string_view::npos ? text.size() : nl;
        out.push_back(text.substr(pos, end - pos));
        if (nl == std::string_view::npos)
            break;
        pos = nl + 1;
    }
    return out;
}

// Resolves the header: the text's own header line when present.
std::vector<std::string> columnsFor(std::vector<std::string_view>& ls, const std::vector<std::string>& fields)
{
    std::vector<std::string> cols;
    for (std::size_t i = 0; i < ls.size(); ++i) {
        if (trim(ls[i]).empty())
            continue;
        auto cells = splitCsvLine(ls[i]);
        if (!cells.empty() && !fields.empty() && canonicalField(headerName(cells[0])) == canonicalField(fields[0])) {
            for (const auto& c : cells)
                cols.push_back(canonicalField(headerName(c)));
            ls.erase(ls.begin(), ls.begin() + std::ptrdiff_t(i) + 1);
            return cols;
        }
        break;
    }
    for (const auto& f : fields)
        cols.push_back(canonicalField(f));
    return cols;
}

} // namespace

const std::vector<std::string>& defaultGpuQueryFields()
{
    static const std::vector<std::string> f{"index", "uuid", "name", "pci.bus_id", "memory.total", "memory.used",
            "utilization.gpu", "temperature.gpu", "power.draw"};
    return f;
}

const std::vector<std::string>& defaultComputeAppsFields()
{
    static const std::vector<std::string> f{"pid", "process_name", "used_gpu_memory", "gpu_uuid"};
    return f;
}

std::vector<std::string> splitCsvLine(std::string_view line)
{
    std::vector<std::string> out;
    std::size_t pos = 0;
    for (;;) {
        const auto comma = line.find(',', pos);
        out.emplace_back(
                trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos)));
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    return out;
}

std::expected<std::vector<GpuInfo>, std::string> parseQueryGpuCsv(
        std::string_view text, const std::vector<std::string>& fields)
{
    auto ls = lines(text);
    const auto cols = columnsFor(ls, fields);
    std::vector<GpuInfo> gpus;
    int lineNo = 0;
    for (auto line : ls) {
        ++lineNo;
        if (trim(line).empty())
            continue;
        const auto cells = splitCsvLine(line);
        if (cells.size() != cols.size())
            return std::unexpected("nvidia-smi --query-gpu line " + std::to_string(lineNo) + ": "
                    + std::to_string(cells.size()) + " values for " + std::to_string(cols.size()) + " fields: '"
                    + std::string(line.substr(0, 200)) + "'");
        GpuInfo g;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const auto& c = cols[i];
            const auto& v = cells[i];
            auto num = [&](std::optional<double>& dst) -> std::string {
                auto n = number(v);
                if (!n)
                    return "nvidia-smi --query-gpu line " + std::to_string(lineNo) + ", field " + c + ": " + n.error();
                dst = *n;
                return {};
            };
            std::string err;
            if (c == "index") {
                std::optional<double> idx;
                err = num(idx);
                if (err.empty() && !idx)
                    err = "nvidia-smi --query-gpu line " + std::to_string(lineNo) + ": no GPU index";
                if (err.empty())
                    g.index = int(*idx);
            } else if (c == "uuid") {
                g.uuid = isMissing(v) ? "" : v;
            } else if (c == "name") {
                g.name = isMissing(v) ? "" : v;
            } else if (c == "pci.bus_id") {
                g.pciBusId = isMissing(v) ? "" : v;
            } else if (c == "memory.total") {
                err = num(g.memoryTotalMib);
            } else if (c == "memory.used") {
                err = num(g.memoryUsedMib);
            } else if (c == "utilization.gpu") {
                err = num(g.utilizationPct);
            } else if (c == "temperature.gpu") {
                err = num(g.temperatureC);
            } else if (c == "power.draw") {
                err = num(g.powerW);
            }
            if (!err.empty())
                return std::unexpected(err);
        }
        if (g.index < 0)
            g.index = int(gpus.size());
        gpus.push_back(std::move(g));
    }
    return gpus;
}

std::expected<std::vector<GpuProcess>, std::string> parseComputeAppsCsv(
        std::string_view text, const std::vector<std::string>& fields)
{
    auto ls = lines(text);
    const auto cols = columnsFor(ls, fields);
    std::vector<GpuProcess> procs;
    int lineNo = 0;
    for (auto line : ls) {
        ++lineNo;
        if (trim(line).empty())
            continue;
        // "No running processes found" in some driver versions.
        if (line.find("No running") != std::string_view::npos)
            continue;
        const auto cells = splitCsvLine(line);
        if (cells.size() != cols.size())
            return std::unexpected("nvidia-smi --query-compute-apps line " + std::to_string(lineNo) + ": "
                    + std::to_string(cells.size()) + " values for " + std::to_string(cols.size()) + " fields: '"
                    + std::string(line.substr(0, 200)) + "'");
        GpuProcess p;
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const auto& c = cols[i];
            const auto& v = cells[i];
            if (c == "pid") {
                auto n = number(v);
                if (!n || !*n)
                    return std::unexpected(
                            "nvidia-smi --query-compute-apps line " + std::to_string(lineNo) + ": bad pid '" + v + "'");
                p.pid = std::int64_t(**n);
            } else if (c == "process_name") {
                p.name = isMissing(v) ? "" : v;
            } else if (c == "used_gpu_memory") {
                auto n = number(v);
                if (!n)
                    return std::unexpected("nvidia-smi --query-compute-apps line " + std::to_string(lineNo)
                            + ", field used_gpu_memory: " + n.error());
                p.usedMemoryMib = *n;
            } else if (c == "gpu_uuid") {
                p.gpuUuid = v;
            }
        }
        procs.push_back(std::move(p));
    }
    return procs;
}

void attachProcesses(std::vector<GpuInfo>& gpus, const std::vector<GpuProcess>& processes)
{
    for (const auto& p : processes)
        for (auto& g : gpus)
            if (!g.uuid.empty() && g.uuid == p.gpuUuid)
                g.processes.push_back(p);
}

} // namespace ty::agent
