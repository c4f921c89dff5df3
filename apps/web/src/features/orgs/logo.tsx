import Avatar from "@mui/material/Avatar";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useServices } from "../../app-services.tsx";
import type { Organization } from "./data.ts";

export const LOGO_MAX_BYTES = 1_000_000;
export const LOGO_TYPES = ["image/png", "image/jpeg"] as const;

/** Why a chosen logo file is refused, or undefined (spec 3 §5: PNG or JPEG, at most 1,000,000 bytes). */
export function logoProblem(file: { type: string; size: number }): "logo_invalid" | "logo_too_large" | undefined {
  if (!(LOGO_TYPES as readonly string[]).includes(file.type)) return "logo_invalid";
  if (file.size > LOGO_MAX_BYTES) return "logo_too_large";
  return undefined;
}

/** Logo requests need the bearer token, so the dashboard fetches the image and shows a blob URL. */
function useLogoUrl(href: string | undefined): string | undefined {
  const { config, sdk } = useServices();
  const blob = useQuery({
    queryKey: ["org-logo", href],
    enabled: Boolean(href),
    staleTime: 3_600_000,
    queryFn: async () => {
      const token = await sdk.auth.getToken();
      const response = await fetch(`${config.apiUrl}${href}`, { headers: { Authorization: `Bearer ${token}` } });
      if (!response.ok) return null;
      return response.blob();
    },
  });
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (!blob.data) {
      setUrl(undefined);
      return;
    }
    const next = URL.createObjectURL(blob.data);
    setUrl(next);
    return () => URL.revokeObjectURL(next);
  }, [blob.data]);
  return url;
}

export function OrgLogo({ org, size = 40 }: { org: Pick<Organization, "name" | "logo_image">; size?: number }) {
  const url = useLogoUrl(org.logo_image?.href);
  return (
    <Avatar
      variant="rounded"
      src={url}
      alt={url ? `${org.name} logo` : undefined}
      sx={{ width: size, height: size, fontSize: size * 0.45, bgcolor: "primary.main" }}
    >
      {org.name.slice(0, 1).toUpperCase()}
    </Avatar>
  );
}
