// The TCP benchmark in ns-3: N TCP bulk transfers across a dumbbell whose 10 Mb/s
// bottleneck (5 ms) has a RED queue (thresholds 5 and 15 packets, limit 100); host i's
// access links (100 Mb/s) give it a round-trip propagation time of 50 + 100*i/(N-1) ms.
// 1460-byte segments, an ACK for every segment; connections start uniformly within the
// first second. --variant picks the congestion control: newreno (TcpNewReno, the default)
// or cubic (TcpCubic, HyStart off), both with SACK (ns-3's default), or dctcp (TcpDctcp
// with ECN, SACK on, the bottleneck's RED set to mark at an instantaneous queue of 18).
// Two more run ns-3's TCP with the window rules of the standards where ns-3.37's classes
// depart from them: cubic-standard (RFC 9438 CUBIC, TcpCubicStandard below; its slow
// start is --cubic-slow-start) and dctcp-floor (TcpDctcp with Linux's two-segment floor).
// Two ns-3.37 behaviours shape the like-with-like settings bench/compare.sh uses:
// - With the TCP timestamp option (ns-3's default) a segment is a 1512-byte IP packet,
//   which the 1500-byte MTU splits into two fragments (1502 and 34 bytes on the wire),
//   and the RED queue counts both. --timestamps 0 gives 1500-byte packets, as on the
//   qossim side.
// - A SACK sender held by its receive window when a loss is found crashes ns-3.37 in
//   TcpRateLinux::SkbSent (one connection with a 64- or 128-segment window does within
//   2 s). --rwnd 1000, a window no connection of this dumbbell reaches, runs.
// Where ns-3's defaults differ from the qossim side's model they are set to match it:
// the classic (RFC 6675-style) recovery instead of PRR, no limited transmit, an initial
// window of one segment, a 200-ms minimum RTO. --cwnd-trace FILE records connection
// --cwnd-conn's window at every change (time in s, window in segments).
//
// Prints one line in the format of bench/qossim-bench/src/tcp.rs.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

/// Where --cwnd-trace writes, and the segment size its windows are counted in.
static std::FILE* g_cwnd_out = nullptr;
static double g_cwnd_mss = 1460.0;

/// Writes one window change: the time (s) and the new window (segments).
static void
CwndChanged(uint32_t, uint32_t now)
{
    std::fprintf(g_cwnd_out, "%.9f %.4f\n", Simulator::Now().GetSeconds(), now / g_cwnd_mss);
}

/// How the standard CUBIC below grows its window in slow start (--cubic-slow-start).
enum class SlowStartRule
{
    /// One segment per ACK of new data (RFC 5681 with ACK counting, as qossim's model).
    PerAck,
    /// Every segment the ACK covers, capped at ssthresh (Linux's tcp_slow_start).
    Capped,
    /// Every segment the ACK covers, with no cap (ns-3.37's TcpCubic).
    Uncapped,
};
static SlowStartRule g_cubic_ss = SlowStartRule::PerAck;
/// Whether the standard CUBIC below takes one congestion-avoidance step per segment an
/// ACK covers (--cubic-count segment, as TcpCubic counts) instead of one per ACK.
static bool g_cubic_count_segments = false;

/// CUBIC as RFC 9438 states it, written for this benchmark so that ns-3's TCP machinery
/// (handshake, SACK scoreboard, recovery, timers) can run the same window rules as
/// qossim's model (crates/qossim/src/transport/cubic.rs): a fractional window grown by
/// (W_cubic(t + RTT) - cwnd) / cwnd per ACK, the target clamped to [cwnd, 1.5 cwnd]; the
/// Reno-friendly estimate with alpha = 3(1 - beta)/(1 + beta) until it reaches W_max;
/// ssthresh = max(beta * flight, 2); fast convergence; after a timeout the next epoch
/// starts at K = 0 from the window it then has (section 4.8); RTT from ns-3's smoothed
/// estimate; one ACK of new data counts as one segment. C = 0.4, beta = 0.7. ns-3.37's TcpCubic departs from this in its slow start
/// (see --cubic-slow-start), its integer ACK counter, ssthresh from the window, and no
/// Reno-friendly region.
class TcpCubicStandard : public TcpCongestionOps
{
  public:
    /// The type's id.
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpCubicStandard")
                                .SetParent<TcpCongestionOps>()
                                .AddConstructor<TcpCubicStandard>();
        return tid;
    }

    std::string GetName() const override
    {
        return "TcpCubicStandard";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpCubicStandard>(this);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t flightBytes) override
    {
        const double mss = tcb->m_segmentSize;
        const double cwnd = tcb->m_cWnd / mss;
        m_wMax = cwnd < m_wMax ? cwnd * (1.0 + kBeta) / 2.0 : cwnd;
        m_epochStart = -1.0;
        return static_cast<uint32_t>(std::max(kBeta * flightBytes / mss, 2.0) * mss);
    }

    void CongestionStateSet(Ptr<TcpSocketState>, const TcpSocketState::TcpCongState_t s) override
    {
        if (s == TcpSocketState::CA_LOSS)
        {
            m_afterTimeout = true;
        }
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t, const Time&) override
    {
        // ns-3 passes its smoothed estimate as the sample; keep the latest.
        if (tcb->m_lastRtt.Get().IsStrictlyPositive())
        {
            m_rtt = tcb->m_lastRtt.Get().GetSeconds();
        }
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t acked) override
    {
        const double mss = tcb->m_segmentSize;
        if (static_cast<uint32_t>(m_w * mss) != tcb->m_cWnd.Get())
        {
            m_w = tcb->m_cWnd / mss; // ns-3 set the window itself (recovery, timeout)
        }
        const double ssthresh = tcb->m_ssThresh / mss;
        if (m_w < ssthresh)
        {
            switch (g_cubic_ss)
            {
            case SlowStartRule::PerAck:
                m_w += 1.0;
                acked = 0;
                break;
            case SlowStartRule::Uncapped:
                m_w += acked;
                acked = 0;
                break;
            case SlowStartRule::Capped: {
                const uint32_t room = static_cast<uint32_t>(std::ceil(ssthresh - m_w));
                const uint32_t used = std::min(acked, room);
                m_w = std::min(m_w + used, ssthresh);
                acked -= used;
                break;
            }
            }
        }
        if (acked > 0 && m_w >= ssthresh)
        {
            CongestionAvoidance(acked);
        }
        tcb->m_cWnd = static_cast<uint32_t>(m_w * mss);
    }

  private:
    static constexpr double kC = 0.4;
    static constexpr double kBeta = 0.7;

    /// Congestion avoidance for one ACK of new data covering `acked` segments, counted
    /// as one segment (ACK counting, as qossim's model) unless --cubic-count segment.
    void CongestionAvoidance(uint32_t acked)
    {
        const double now = Simulator::Now().GetSeconds();
        if (m_epochStart < 0)
        {
            m_epochStart = now;
            if (m_afterTimeout)
            {
                m_afterTimeout = false;
                m_wMax = m_w;
            }
            if (m_w < m_wMax)
            {
                m_k = std::cbrt((m_wMax - m_w) / kC);
                m_origin = m_wMax;
            }
            else
            {
                m_k = 0.0;
                m_origin = m_w;
            }
            m_wEst = m_w;
        }
        const double t = now - m_epochStart;
        const double alpha = m_wEst >= m_wMax ? 1.0 : 3.0 * (1.0 - kBeta) / (1.0 + kBeta);
        const uint32_t steps = g_cubic_count_segments ? acked : 1;
        for (uint32_t i = 0; i < steps; i++)
        {
            m_wEst += alpha / m_w;
            if (Curve(t) < m_wEst)
            {
                m_w = std::max(m_wEst, m_w);
            }
            else
            {
                const double target = std::clamp(Curve(t + m_rtt), m_w, 1.5 * m_w);
                m_w += (target - m_w) / m_w;
            }
        }
    }

    /// W_cubic(t), segments.
    double Curve(double t) const
    {
        return kC * std::pow(t - m_k, 3) + m_origin;
    }

    double m_w = 1.0;           //!< The window, segments (fractional).
    double m_wMax = 0.0;        //!< W_max, segments.
    double m_epochStart = -1.0; //!< Start of the epoch, s (negative: none yet).
    double m_k = 0.0;           //!< K, s.
    double m_origin = 0.0;      //!< The curve's plateau, segments.
    double m_wEst = 0.0;        //!< The Reno-friendly estimate, segments.
    double m_rtt = 0.0;         //!< Smoothed RTT, s.
    bool m_afterTimeout = false; //!< A timeout came since the last epoch.
};

NS_OBJECT_ENSURE_REGISTERED(TcpCubicStandard);

/// ns-3.37's TcpDctcp with Linux's floor on its cut: ssthresh at least two segments.
/// TcpDctcp itself cuts to (1 - alpha/2) cwnd with no floor, so a window can fall below
/// one segment; the sender then sends nothing until a retransmission timeout.
class TcpDctcpFloor : public TcpDctcp
{
  public:
    /// The type's id.
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::TcpDctcpFloor")
                                .SetParent<TcpDctcp>()
                                .AddConstructor<TcpDctcpFloor>();
        return tid;
    }

    std::string GetName() const override
    {
        return "TcpDctcpFloor";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpDctcpFloor>(this);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t flight) override
    {
        return std::max(TcpDctcp::GetSsThresh(tcb, flight), 2 * tcb->m_segmentSize);
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpDctcpFloor);

int
main(int argc, char* argv[])
{
    uint32_t flows = 50;
    double sim = 100.0;
    uint32_t seed = 1;
    std::string variant = "newreno";
    std::string cubic_ss = "per-ack";
    std::string cubic_count = "ack";
    std::string recovery = "classic";
    bool limited = false;
    uint32_t init_cwnd = 1;
    uint32_t min_rto_ms = 200;
    uint32_t rwnd = 64;
    bool timestamps = true;
    std::string cwnd_trace;
    uint32_t cwnd_conn = 0;
    CommandLine cmd;
    cmd.AddValue("flows", "number of TCP connections", flows);
    cmd.AddValue("sim", "simulated seconds", sim);
    cmd.AddValue("seed", "seed", seed);
    cmd.AddValue("variant",
                 "congestion control: newreno, cubic, cubic-standard, dctcp or dctcp-floor",
                 variant);
    cmd.AddValue("cubic-count",
                 "cubic-standard's congestion avoidance: one step per ack (the default) or "
                 "per segment acknowledged",
                 cubic_count);
    cmd.AddValue("cubic-slow-start",
                 "cubic-standard's slow start: per-ack (the default), capped or uncapped",
                 cubic_ss);
    cmd.AddValue("recovery", "loss recovery: classic or prr (ns-3's default)", recovery);
    cmd.AddValue("limited-transmit", "limited transmit (ns-3's default: on)", limited);
    cmd.AddValue("init-cwnd", "initial window, segments (ns-3's default: 10)", init_cwnd);
    cmd.AddValue("min-rto-ms", "minimum RTO, ms (ns-3's default: 1000)", min_rto_ms);
    cmd.AddValue("rwnd", "receive window, segments", rwnd);
    cmd.AddValue("timestamps", "the TCP timestamp option (ns-3's default: on)", timestamps);
    cmd.AddValue("cwnd-trace", "file for one connection's window (time s, cwnd segments)",
                 cwnd_trace);
    cmd.AddValue("cwnd-conn", "the connection whose window --cwnd-trace records", cwnd_conn);
    // Accept "--flows N" as well as "--flows=N".
    std::vector<std::string> args;
    for (int i = 0; i < argc; i++)
    {
        std::string a = argv[i];
        if (i + 1 < argc && a.rfind("--", 0) == 0 && a.find('=') == std::string::npos)
        {
            args.push_back(a + "=" + argv[i + 1]);
            i++;
        }
        else
        {
            args.push_back(a);
        }
    }
    std::vector<char*> cargs;
    for (auto& a : args)
    {
        cargs.push_back(a.data());
    }
    cmd.Parse(static_cast<int>(cargs.size()), cargs.data());

    if (cubic_ss == "per-ack")
    {
        g_cubic_ss = SlowStartRule::PerAck;
    }
    else if (cubic_ss == "capped")
    {
        g_cubic_ss = SlowStartRule::Capped;
    }
    else if (cubic_ss == "uncapped")
    {
        g_cubic_ss = SlowStartRule::Uncapped;
    }
    else
    {
        std::fprintf(stderr,
                     "--cubic-slow-start: unknown '%s'; expected per-ack, capped or uncapped\n",
                     cubic_ss.c_str());
        return 2;
    }

    if (cubic_count != "ack" && cubic_count != "segment")
    {
        std::fprintf(stderr, "--cubic-count: unknown '%s'; expected ack or segment\n",
                     cubic_count.c_str());
        return 2;
    }
    g_cubic_count_segments = cubic_count == "segment";

    auto t0 = std::chrono::steady_clock::now();
    RngSeedManager::SetSeed(seed + 1);
    const uint32_t mss = 1460;
    if (variant == "newreno")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                           TypeIdValue(TcpNewReno::GetTypeId()));
    }
    else if (variant == "cubic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
        Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    }
    else if (variant == "cubic-standard")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                           TypeIdValue(TcpCubicStandard::GetTypeId()));
    }
    else if (variant == "dctcp" || variant == "dctcp-floor")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                           variant == "dctcp" ? TypeIdValue(TcpDctcp::GetTypeId())
                                              : TypeIdValue(TcpDctcpFloor::GetTypeId()));
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::On));
    }
    else
    {
        std::fprintf(stderr,
                     "--variant: unknown '%s'; expected newreno, cubic, cubic-standard, dctcp "
                     "or dctcp-floor\n",
                     variant.c_str());
        return 2;
    }
    if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limited));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(init_cwnd));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(min_rto_ms)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rwnd * mss));

    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    NodeContainer routers;
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("5ms"));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer bdev = bottleneck.Install(routers.Get(0), routers.Get(1));
    TrafficControlHelper red;
    if (variant == "dctcp" || variant == "dctcp-floor")
    {
        // Step marking at K = 18 packets: with the instantaneous queue as RED's average
        // (QW 1) and both thresholds at K, every ECN-capable arrival that finds K or more
        // packets queued is marked.
        red.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MinTh", DoubleValue(18),
                             "MaxTh", DoubleValue(18),
                             "QW", DoubleValue(1.0),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "Gentle", BooleanValue(false),
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", StringValue("10Mbps"),
                             "LinkDelay", StringValue("5ms"),
                             "MaxSize", QueueSizeValue(QueueSize("100p")));
    }
    else
    {
        red.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MinTh", DoubleValue(5),
                             "MaxTh", DoubleValue(15),
                             "LInterm", DoubleValue(10),
                             "QW", DoubleValue(0.002),
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", StringValue("10Mbps"),
                             "LinkDelay", StringValue("5ms"),
                             "MaxSize", QueueSizeValue(QueueSize("100p")));
    }
    red.Install(bdev.Get(0));
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000p")));
    fifo.Install(bdev.Get(1));

    Ipv4AddressHelper address;
    address.SetBase("10.0.0.0", "255.255.255.252");
    address.Assign(bdev);
    address.NewNetwork();
    std::vector<Ipv4Address> sinks;
    for (uint32_t i = 0; i < flows; i++)
    {
        double rtt_ms = 50.0 + 100.0 * i / std::max<uint32_t>(flows - 1, 1);
        double d_ms = (rtt_ms / 2.0 - 5.0) / 2.0;
        PointToPointHelper access;
        access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
        access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(int64_t(d_ms * 1000.0))));
        NetDeviceContainer a = access.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer b = access.Install(routers.Get(1), receivers.Get(i));
        address.Assign(a);
        address.NewNetwork();
        Ipv4InterfaceContainer bi = address.Assign(b);
        address.NewNetwork();
        sinks.push_back(bi.GetAddress(1));
        TrafficControlHelper::Default().Uninstall(a);
        TrafficControlHelper::Default().Uninstall(b);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    if (!cwnd_trace.empty())
    {
        g_cwnd_out = std::fopen(cwnd_trace.c_str(), "w");
        if (g_cwnd_out == nullptr)
        {
            std::fprintf(stderr, "--cwnd-trace: cannot write '%s'\n", cwnd_trace.c_str());
            return 2;
        }
        g_cwnd_mss = mss;
    }
    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    std::vector<Ptr<PacketSink>> apps;
    for (uint32_t i = 0; i < flows; i++)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
        ApplicationContainer s = sink.Install(receivers.Get(i));
        s.Start(Seconds(0));
        apps.push_back(DynamicCast<PacketSink>(s.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], 9));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer c = bulk.Install(senders.Get(i));
        double at = start->GetValue(0.0, 1.0);
        c.Start(Seconds(at));
        if (!cwnd_trace.empty() && i == cwnd_conn)
        {
            // The socket exists once the application has started.
            Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(c.Get(0));
            Simulator::Schedule(Seconds(at) + NanoSeconds(1), [app]() {
                app->GetSocket()->TraceConnectWithoutContext("CongestionWindow",
                                                             MakeCallback(&CwndChanged));
            });
        }
    }
    Simulator::Stop(Seconds(sim));
    Simulator::Run();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double delivered = 0, sum = 0, sum2 = 0;
    std::vector<double> g;
    std::string list;
    for (auto& a : apps)
    {
        double bytes = static_cast<double>(a->GetTotalRx());
        delivered += bytes / mss;
        double x = bytes * 8 / sim / 1e6;
        g.push_back(x);
        sum += x;
        sum2 += x * x;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.4f", list.empty() ? "" : ",", x);
        list += buf;
    }
    Simulator::Destroy();
    if (g_cwnd_out != nullptr)
    {
        std::fclose(g_cwnd_out);
    }
    std::vector<double> sorted = g;
    std::sort(sorted.begin(), sorted.end());
    // Nearest-rank percentile of the sorted goodputs.
    auto pct = [&](double q) {
        size_t k = static_cast<size_t>(std::ceil(q * sorted.size()));
        k = std::min(std::max<size_t>(k, 1), sorted.size());
        return sorted[k - 1];
    };
    std::printf("flows=%u sim=%gs delivered_pkts=%.0f wall=%.3fs pkts_per_wall_s=%.0f "
                "goodput_mean_mbps=%.4f goodput_min_mbps=%.4f goodput_p10_mbps=%.4f "
                "goodput_median_mbps=%.4f goodput_p90_mbps=%.4f goodput_max_mbps=%.4f "
                "goodput_jain=%.4f goodputs_mbps=%s\n",
                flows, sim, delivered, wall, delivered / wall, sum / flows, sorted.front(),
                pct(0.1), pct(0.5), pct(0.9), sorted.back(), sum * sum / (flows * sum2),
                list.c_str());
    return 0;
}
