import "leaflet/dist/leaflet.css";
import Box from "@mui/material/Box";
import type { LatLngExpression, LeafletMouseEvent } from "leaflet";
import type { ReactNode } from "react";
import { CircleMarker, MapContainer, TileLayer, Tooltip, useMapEvents } from "react-leaflet";
import { useServices } from "../../app-services.tsx";

/**
 * The deployment's tiles (FLOTILLA_MAP_TILES, /config.json `mapTilesUrl`); none: no tile requests
 * at all, the markers on a blank ground, as without network.
 */
const OSM_ATTRIBUTION = '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors';
const attributionOf = (url: string) => (url.includes("openstreetmap.org") ? OSM_ATTRIBUTION : undefined);

export interface MapPoint {
  key: string;
  position: [number, number];
  label: string;
  color: string;
  onClick?: () => void;
}

function ClickHandler({ onClick }: { onClick: (lat: number, lng: number) => void }) {
  useMapEvents({ click: (event: LeafletMouseEvent) => onClick(event.latlng.lat, event.latlng.lng) });
  return null;
}

/** A map of devices as coloured dots; an optional click handler receives the clicked coordinates. */
export function DeviceMap(props: {
  points: MapPoint[];
  label: string;
  height?: number;
  center?: [number, number];
  zoom?: number;
  onMapClick?: (lat: number, lng: number) => void;
  children?: ReactNode;
}) {
  const center: LatLngExpression = props.center ?? props.points[0]?.position ?? [20, 0];
  const tiles = useServices().config.mapTilesUrl;
  const attribution = tiles ? attributionOf(tiles) : undefined;
  return (
    <Box
      role="region"
      aria-label={props.label}
      sx={{
        height: props.height ?? 480,
        borderRadius: 1,
        overflow: "hidden",
        border: 1,
        borderColor: "divider",
        "& .leaflet-container": { height: "100%", width: "100%", bgcolor: "#e8edf2", font: "inherit" },
      }}
    >
      {/* Several devices: the map opens on all of them; one or none: on the given center. */}
      <MapContainer
        {...(props.points.length > 1 && !props.center
          ? { bounds: props.points.map((point) => point.position), boundsOptions: { padding: [40, 40], maxZoom: 8 } }
          : { center, zoom: props.zoom ?? (props.points.length > 0 ? 4 : 2) })}
        scrollWheelZoom
      >
        {tiles ? <TileLayer url={tiles} {...(attribution ? { attribution } : {})} /> : null}
        {props.points.map((point) => (
          <CircleMarker
            key={point.key}
            center={point.position}
            radius={8}
            pathOptions={{ color: "#ffffff", weight: 2, fillColor: point.color, fillOpacity: 1 }}
            eventHandlers={point.onClick ? { click: point.onClick } : undefined}
          >
            <Tooltip>{point.label}</Tooltip>
          </CircleMarker>
        ))}
        {props.onMapClick ? <ClickHandler onClick={props.onMapClick} /> : null}
        {props.children}
      </MapContainer>
    </Box>
  );
}
