import { type Tier, tierOf } from "@flotilla/domain";
import Box from "@mui/material/Box";
import { useTranslation } from "react-i18next";

/**
 * The tier images (spec 3 §9): a billing code's tier (its optional version suffix ignored) as a
 * small badge — custom, enterprise, free, org, pilot, production, prototype, solo, else unknown.
 * Layers stand for scale (one for a prototype, three for production); each tier has its colour.
 */
const LOOKS: Record<Tier, { from: string; to: string; glyph: Glyph }> = {
  free: { from: "#94a3b8", to: "#64748b", glyph: "ring" },
  solo: { from: "#38bdf8", to: "#0284c7", glyph: "dot" },
  prototype: { from: "#34d399", to: "#059669", glyph: "layers1" },
  pilot: { from: "#818cf8", to: "#4f46e5", glyph: "layers2" },
  production: { from: "#a78bfa", to: "#7c3aed", glyph: "layers3" },
  org: { from: "#fbbf24", to: "#d97706", glyph: "people" },
  enterprise: { from: "#475569", to: "#0f172a", glyph: "building" },
  custom: { from: "#f472b6", to: "#db2777", glyph: "star" },
  unknown: { from: "#d1d5db", to: "#9ca3af", glyph: "question" },
};

type Glyph = "ring" | "dot" | "layers1" | "layers2" | "layers3" | "people" | "building" | "star" | "question";

function layers(count: number) {
  // Stacked rhombi, the top one filled.
  return Array.from({ length: count }, (_, index) => {
    const y = 20 + (count - 1) * 2.5 - index * 5;
    const top = index === count - 1;
    return (
      <path
        key={y}
        d={`M20 ${y - 6} L29 ${y} L20 ${y + 6} L11 ${y} Z`}
        fill={top ? "#fff" : "none"}
        stroke="#fff"
        strokeWidth="1.6"
        strokeLinejoin="round"
        opacity={top ? 1 : 0.75}
      />
    );
  });
}

function glyphOf(glyph: Glyph) {
  switch (glyph) {
    case "ring":
      return <circle cx="20" cy="20" r="7" fill="none" stroke="#fff" strokeWidth="2" />;
    case "dot":
      return <circle cx="20" cy="20" r="6" fill="#fff" />;
    case "layers1":
      return layers(1);
    case "layers2":
      return layers(2);
    case "layers3":
      return layers(3);
    case "people":
      return (
        <g fill="#fff">
          <circle cx="15" cy="16" r="3.2" />
          <circle cx="25" cy="16" r="3.2" />
          <path d="M9 28c0-4 2.7-6.5 6-6.5s6 2.5 6 6.5zM19 28c0-4 2.7-6.5 6-6.5s6 2.5 6 6.5z" />
        </g>
      );
    case "building":
      return (
        <g fill="#fff">
          <rect x="13" y="11" width="14" height="18" rx="1.5" />
          <g fill="#0f172a" opacity="0.55">
            <rect x="16" y="14" width="3" height="3" />
            <rect x="21" y="14" width="3" height="3" />
            <rect x="16" y="19" width="3" height="3" />
            <rect x="21" y="19" width="3" height="3" />
            <rect x="18.5" y="24" width="3" height="5" />
          </g>
        </g>
      );
    case "star":
      return <path d="M20 10l2.9 6.3 6.9.7-5.2 4.6 1.5 6.8L20 24.9l-6.1 3.5 1.5-6.8-5.2-4.6 6.9-.7z" fill="#fff" />;
    case "question":
      return (
        <text
          x="20"
          y="26"
          textAnchor="middle"
          fontSize="17"
          fontWeight="700"
          fill="#fff"
          fontFamily="system-ui, sans-serif"
        >
          ?
        </text>
      );
  }
}

export function TierImage(props: { billingCode: string | null | undefined; size?: number }) {
  const { t } = useTranslation();
  const tier = tierOf(props.billingCode);
  const look = LOOKS[tier];
  const size = props.size ?? 40;
  const gradient = `tier-${tier}`;
  return (
    <Box
      component="svg"
      viewBox="0 0 40 40"
      role="img"
      aria-label={t("billing.tier_image", { tier: t(`billing.tiers.${tier}`) })}
      data-tier={tier}
      sx={{ width: size, height: size, flex: "none", display: "block" }}
    >
      <defs>
        <linearGradient id={gradient} x1="0" y1="0" x2="1" y2="1">
          <stop offset="0" stopColor={look.from} />
          <stop offset="1" stopColor={look.to} />
        </linearGradient>
      </defs>
      <rect width="40" height="40" rx="10" fill={`url(#${gradient})`} />
      {glyphOf(look.glyph)}
    </Box>
  );
}
